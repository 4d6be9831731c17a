// SPDX-License-Identifier: MIT
#include "run_fixture.hpp"
#include "sim/report/chart/bar_chart.hpp"
#include "sim/report/chart/roofline_chart.hpp"
#include "sim/report/chart/series_chart.hpp"
#include "sim/report/chart/svg.hpp"
#include "sim/report/chart/text_chart.hpp"
#include "sim/report/html.hpp"

#include <catch2/catch.hpp>

#include <limits>
#include <sstream>

namespace {

// Two roofs, one slope, two points: every layout figure below follows from these by hand.
rsim::RooflineChart synthetic_chart() {
  rsim::RooflineChart chart;
  chart.title = "synthetic";
  chart.roofs = {{"fp32  8 TFLOP/s", rsim::FlopsPerSecond(8e12), false},
                 {"fp8  500 TFLOP/s", rsim::FlopsPerSecond(5e14), true}};
  chart.slopes = {{"dram 250 GB/s", rsim::BytesPerSecond(2.5e11), false, true}};
  chart.points = {{"A", 100.0, 2.5e13, 0.5, rsim::Bound::memory, false, 0.0},
                  {"B", 4000.0, 5e14, 0.3, rsim::Bound::compute, false, 0.0}};
  return chart;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("log and linear axes map values to pixels", "[svg]") {
  // pixel = 90 + (log10 v − log10 0.1) / (log10 1e4 − log10 0.1) · 720 = 90 + (log10 v + 1) · 144
  const rsim::LogAxis x{0.1, 1e4, 90.0, 810.0};
  CHECK(x.to_pixel(0.1) == Approx(90.0));
  CHECK(x.to_pixel(1.0) == Approx(234.0));                               // 90 + 1 · 144
  CHECK(x.to_pixel(1e4) == Approx(810.0));                               // 90 + 5 · 144
  CHECK(x.to_pixel(1894.0) == Approx(90.0 + (3.277380 + 1.0) * 144.0));  // log10 1894 = 3.27738
  CHECK(x.decades() == std::vector<double>{0.1, 1.0, 10.0, 100.0, 1000.0, 1e4});
  // A y axis runs upwards: low at the bottom pixel.
  const rsim::LogAxis y{1e10, 1e15, 648.0, 80.0};
  CHECK(y.to_pixel(1e12) == Approx(648.0 - 2.0 / 5.0 * 568.0));  // two of five decades up
  const rsim::LinearAxis time{0.0, 700.0, 100.0, 800.0};
  CHECK(time.to_pixel(350.0) == Approx(450.0));
  // 700 / 7 = 100: a step of 100 from 0 to 700.
  CHECK(time.ticks() == std::vector<double>{0, 100, 200, 300, 400, 500, 600, 700});
  // 620 / 7 = 88.6 → step 100 → the first multiple at or above 620 is 700.
  CHECK(rsim::nice_ceiling(620.0) == Approx(700.0));
  CHECK(rsim::nice_ceiling(0.0483) == Approx(0.05));  // 0.0483 / 7 = 0.0069 → step 0.01
}

TEST_CASE("decade labels and XML escaping", "[svg]") {
  CHECK(rsim::decade_label(0.1) == "0.1");
  CHECK(rsim::decade_label(100.0) == "100");
  CHECK(rsim::decade_label(1e4) == "10 k");
  CHECK(rsim::decade_label(1e12) == "1 T");
  CHECK(rsim::decade_label(1e15) == "1 P");
  CHECK(rsim::escape_xml("rmsnorm<float, 2048> & \"x\"") ==
        "rmsnorm&lt;float, 2048&gt; &amp; &quot;x&quot;");
}

TEST_CASE("labels are placed without overlapping each other or obstacles", "[svg]") {
  const rsim::Box area{0.0, 0.0, 400.0, 300.0};
  // Five labels on one point: each must find its own spot.
  std::vector<rsim::LabelRequest> requests(5, rsim::LabelRequest{200.0, 150.0, 5.0, 80.0, 15.0});
  const rsim::Box obstacle{208.0, 140.0, 90.0, 20.0};  // right of the point, where spot 1 is
  const auto placements = rsim::place_labels(requests, area, {obstacle});
  for (std::size_t i = 0; i < placements.size(); ++i) {
    REQUIRE(placements[i].placed);
    CHECK(area.contains(placements[i].box));
    CHECK_FALSE(placements[i].box.intersects(obstacle));
    for (std::size_t j = 0; j < i; ++j) {
      CHECK_FALSE(placements[i].box.intersects(placements[j].box));
    }
  }
  // The first label wanted the right side (blocked), so it went left: x = 200 − 5 − 3 − 80.
  CHECK(placements[0].box.x == Approx(112.0));
  CHECK(rsim::Box{0, 0, 10, 10}.intersects(rsim::Box{9, 9, 5, 5}));
  CHECK_FALSE(rsim::Box{0, 0, 10, 10}.intersects(rsim::Box{10, 0, 5, 5}));  // touching
}

TEST_CASE("roofline layout: axis ranges and pixels from the mapping formula", "[roofline]") {
  const rsim::RooflineLayout layout = rsim::layout_roofline(synthetic_chart());
  // Plot box: x 90, y 80, width 1180 − 90 − 370 = 720, height 720 − 80 − 72 = 568.
  CHECK(layout.plot.x == 90.0);
  CHECK(layout.plot.width == 720.0);
  CHECK(layout.plot.height == 568.0);
  // x: ridges 8e12 / 2.5e11 = 32 and 5e14 / 2.5e11 = 2000; lowest candidate min(32 / 30, 100 /
  // 1.5) = 1.07 → decade 1; highest max(2000 · 2, 4000 · 3) = 12000 → decade 1e5.
  CHECK(layout.x.low == Approx(1.0));
  CHECK(layout.x.high == Approx(1e5));
  // y: low = min(8e12 / 30, 2.5e13 / 2, 5e14 / 2) = 2.667e11; high = 5e14 · 2.5 = 1.25e15.
  CHECK(layout.y.low == Approx(8e12 / 30.0));
  CHECK(layout.y.high == Approx(1.25e15));
  // Point A (100 FLOP/B, 25 TFLOP/s): x = 90 + log10(100) / 5 · 720 = 378;
  // y = 648 − (log10 2.5e13 − log10 2.667e11) / (log10 1.25e15 − log10 2.667e11) · 568
  //   = 648 − (13.39794 − 11.42597) / (15.09691 − 11.42597) · 568 = 648 − 0.537184 · 568 = 342.88.
  CHECK(layout.x.to_pixel(100.0) == Approx(378.0));
  CHECK(layout.y.to_pixel(2.5e13) == Approx(342.88).margin(0.01));
  // The fp8 ridge (2000 FLOP/B): x = 90 + log10(2000) / 5 · 720 = 90 + 3.30103 · 144 = 565.35.
  CHECK(layout.x.to_pixel(2000.0) == Approx(565.35).margin(0.01));
  // Radii: 4 + 24 · √share: A 4 + 24 · 0.70711 = 20.97, B 4 + 24 · 0.54772 = 17.15.
  CHECK(layout.radius[0] == Approx(20.97).margin(0.01));
  CHECK(layout.radius[1] == Approx(17.15).margin(0.01));
  // Both points are labelled, the larger share first.
  CHECK(layout.labelled == std::vector<std::size_t>{0, 1});
}

TEST_CASE("the π0.5 chart: labels of the top points are placed and do not intersect",
          "[roofline][pi05]") {
  const auto run = rsim::test::run_scenario("pi05_thor");
  const rsim::RooflineChart chart = rsim::roofline_of_run(run);
  const rsim::RooflineLayout layout = rsim::layout_roofline(chart, 10);
  REQUIRE(layout.labelled.size() == 10);
  for (std::size_t i = 0; i < layout.labels.size(); ++i) {
    INFO(chart.points[layout.labelled[i]].label);
    REQUIRE(layout.labels[i].placed);
    CHECK(layout.plot.contains(layout.labels[i].box));
    for (std::size_t j = 0; j < i; ++j) {
      CHECK_FALSE(layout.labels[i].box.intersects(layout.labels[j].box));
    }
    for (const rsim::Box& fixed : layout.fixed_labels) {
      CHECK_FALSE(layout.labels[i].box.intersects(fixed));
    }
  }
  // The roof in play is fp8 (the scenario's precision), and Thor's fp8 and int8 share 517 TFLOP/s
  // (hardware/thor_t5000.yaml), so they are one line.
  const auto in_play = std::find_if(chart.roofs.begin(), chart.roofs.end(),
                                    [](const rsim::RoofLine& roof) { return roof.in_play; });
  REQUIRE(in_play != chart.roofs.end());
  CHECK(in_play->label == "fp8 · int8  517 TFLOP/s");
  CHECK(chart.roofs.size() == 4);  // 8.064 T, 258.5 T (bf16, fp16), 517 T, 1035 T (sparse, fp4)
  // A memory-bound op sits on the DRAM slope: attainable = 273 GB/s × intensity.
  for (const rsim::ChartPoint& point : chart.points) {
    if (point.bound == rsim::Bound::memory) {
      CHECK(point.attainable == Approx(2.73e11 * point.intensity).epsilon(1e-9));
    }
  }
  // q_proj and o_proj of the action expert have one shape (1024 → 2048 and back: Gemma 300M
  // has 8 heads × 256 = 2048 query width, width 1024), so they share a spot and one point whose
  // share is the sum of theirs.
  double q_and_o = 0.0;
  for (std::size_t row = 0; row < run.table.order.size(); ++row) {
    const std::string name = run.graph.op(run.table.order[row]).qualified_name();
    if (name == "action/layer/q_proj" || name == "action/layer/o_proj") {
      q_and_o += run.table.costs[row].t_lower.si() *
                 run.table.counts(static_cast<Eigen::Index>(row)) / run.bounds.total.t_lower.si();
    }
  }
  const auto merged = std::find_if(chart.points.begin(), chart.points.end(), [](const auto& p) {
    return p.label.rfind("action/q_proj + o_proj ", 0) == 0;
  });
  REQUIRE(merged != chart.points.end());
  CHECK(merged->share == Approx(q_and_o));
  const std::string svg = rsim::render_roofline_svg(chart);
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1180\"", 0) == 0);
  CHECK(svg.find("dram 273 GB/s") != std::string::npos);
  CHECK(svg.find(">1894<") != std::string::npos);  // 517e12 / 273e9 = 1893.77 (data sheet DS-11945)
}

TEST_CASE("the text chart puts a point in the cell its log position gives", "[roofline]") {
  const std::string text = rsim::render_roofline_text(synthetic_chart(), 64, 20);
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    lines.push_back(line);
  }
  // Title, subtitle, blank, then rows prefixed by 9 characters ("{:>7} |").
  // A: column round(log10(100) / 5 · 63) = round(25.2) = 25; row round(19 − 0.537184 · 19) =
  // round(8.79) = 9.
  REQUIRE(lines.size() > 12);
  CHECK(lines[3 + 9].at(9 + 25) == 'A');
  // fp8 (in play, '='): log10 5e14 = 14.69897, fraction (14.69897 − 11.42597) / 3.67094 =
  // 0.89161 → row round(19 − 0.89161 · 19) = round(2.06) = 2.
  CHECK(lines[3 + 2].find("====") != std::string::npos);
  CHECK(lines[3 + 2].find("fp8  500 TFLOP/s") != std::string::npos);
  CHECK(text.find("A A — 100 FLOP/B") != std::string::npos);
}

TEST_CASE("roofline labels keep off the roofs and the ridge markers", "[roofline]") {
  // Issue 25: a label covered the roof and its ridge marker. A point just under the fp8 roof,
  // right of its ridge (2000 FLOP/B), wants its label beside it, where the roof runs.
  auto chart = synthetic_chart();
  chart.points = {{"just under the roof, with a long label", 3000.0, 4.5e14, 0.5,
                   rsim::Bound::compute, false, 0.0}};
  const rsim::RooflineLayout layout = rsim::layout_roofline(chart);
  REQUIRE(layout.labels.size() == 1);
  const auto& label = layout.labels[0];
  if (label.placed) {
    // fp8: 5e14 FLOP/s from its ridge at 2000 FLOP/B to the plot's right edge, ±3 px.
    const double left = layout.x.to_pixel(2000.0);
    const rsim::Box roof{left, layout.y.to_pixel(5e14) - 3.0, layout.plot.right() - left, 6.0};
    CHECK_FALSE(label.box.intersects(roof));
    const rsim::Box ridge{left - 6.0, layout.y.to_pixel(5e14) - 6.0, 12.0, 12.0};
    CHECK_FALSE(label.box.intersects(ridge));
  } else {
    // Left out: the SVG says so.
    CHECK_THAT(rsim::render_roofline_svg(chart), Catch::Contains("Not labelled"));
  }
  // The legend lists only what is drawn: no network slope here.
  CHECK_THAT(rsim::render_roofline_svg(chart), !Catch::Contains("network bandwidth"));
}

TEST_CASE("the text chart says when a labelled point shares another's cell", "[roofline]") {
  // Issue 25: the top op's label lay hidden under another. A third point 1 % from A lands in A's
  // cell (a 64-column, 5-decade axis: a cell spans 10^(5/63) ≈ 1.2×) and the key says so.
  auto chart = synthetic_chart();
  chart.points.push_back({"C", 101.0, 2.525e13, 0.4, rsim::Bound::memory, false, 0.0});
  const std::string text = rsim::render_roofline_text(chart, 64, 20);
  INFO(text);
  // Marks go in the layout's order (A, then C as "B", then B as "C").
  CHECK(text.find("B C — 101 FLOP/B, 25.25 TFLOP/s (in A's cell: drawn as A)") !=
        std::string::npos);
  CHECK(text.find("A A — 100 FLOP/B, 25 TFLOP/s\n") != std::string::npos);
}

TEST_CASE("stacked bars: segments tile the bar, the marker marks the lower bound", "[bars]") {
  rsim::StackedBars bars;
  bars.title = "t";
  bars.segment_names = {"math", "mem", "on-chip", "net"};
  bars.marker_name = "lower";
  bars.bars = {{"plan a", {1.0, 2.0, 0.0, 1.0}, 3.0, ""},
               {"b", {1.0, 1.0, 0.0, 0.0}, 1.0, "no fit"}};
  // Width 8 for the longest bar (4 s): 2 cells per second. Plan a: math cells [0, 2), memory
  // [2, 6), network [6, 8), marker at round(3 · 2) = 6. Bar b: [0, 2) and [2, 4), marker at 2.
  const std::string text = rsim::render_bars_text(bars, 8);
  CHECK(text.find("plan a ##====|~") != std::string::npos);
  CHECK(text.find("b      ##|=") != std::string::npos);
  CHECK(text.find("no fit") != std::string::npos);
  const std::string svg = rsim::render_bars_svg(bars);
  // Background, legend keys of the 3 segments drawn (on-chip is 0 in both bars), 2 bars × 4.
  CHECK(count_of(svg, "<rect") == 1 + 3 + 8);
  CHECK(text.find("on-chip") == std::string::npos);
}

TEST_CASE("a bar is as long as the table's upper bound, on-chip tiers included", "[bars]") {
  // Issue 25: the bars omitted the on-chip tiers (43.34 ms against the table's 51.64 ms for
  // pi05_thor). The upper bound is Σ over ops of every roof's time, so the four segments
  // (math, main memory, on-chip tiers, network) must add up to it.
  const auto run = rsim::test::run_scenario("pi05_thor");
  const auto bars = rsim::bars_of_runs({run}, "t");
  REQUIRE(bars.bars.size() == 1);
  const auto& segments = bars.bars[0].segments_s;
  REQUIRE(segments.size() == 4);
  CHECK(segments[2] > 0.0);  // Thor's L2 and SMEM serve tiles: their time is in the upper bound
  CHECK(segments[0] + segments[1] + segments[2] + segments[3] ==
        Approx(run.bounds.total.t_upper.si()).epsilon(1e-12));
  CHECK(bars.bars[0].marker_s == run.bounds.total.t_lower.si());
}

TEST_CASE("one bar that dwarfs the rest is drawn broken, the rest keep their scale", "[bars]") {
  rsim::StackedBars bars;
  bars.title = "t";
  bars.segment_names = {"math", "mem"};
  bars.marker_name = "lower";
  bars.bars = {
      {"big", {10.0, 0.0}, 0.0, ""}, {"a", {1.0, 1.0}, 0.0, ""}, {"b", {1.0, 0.0}, 0.0, ""}};
  // 10 s > 4 × 2 s: the axis ends at 1.25 × 2 = 2.5 s. Width 10 → 4 cells per second: bar a
  // is ####==== (math [0, 4), memory [4, 8)); big fills 10 cells and ends in "//".
  CHECK(rsim::axis_extent(bars) == Approx(2.5));
  const std::string text = rsim::render_bars_text(bars, 10);
  CHECK(text.find("big ##########//") != std::string::npos);
  CHECK(text.find("a   ####====") != std::string::npos);
  CHECK(text.find("10 s") != std::string::npos);  // its figures still say its length
  CHECK(rsim::render_bars_svg(bars).find("(axis broken)") != std::string::npos);
  // Without the outlier the axis ends at the longest bar.
  bars.bars.erase(bars.bars.begin());
  CHECK(rsim::axis_extent(bars) == Approx(2.0));
}

TEST_CASE("series: crossovers where the lower bounds cross", "[series]") {
  rsim::SeriesChart chart;
  chart.x_label = "batch";
  chart.series = {{"p", {1, 2, 3}, {1, 2, 3}, {2, 3, 4}, {}, {}},
                  {"q", {1, 2, 3}, {2.5, 2.5, 2.5}, {3, 3, 3}, {}, {}}};
  // p − q: −0.5 at x = 2, +0.5 at x = 3 → they cross halfway: x = 2.5, time 2.5.
  auto crossovers = rsim::find_crossovers(chart);
  REQUIRE(crossovers.size() == 1);
  CHECK(crossovers[0].x == Approx(2.5));
  CHECK(crossovers[0].time_s == Approx(2.5));
  // On log axes the interpolation is in log space: y = x meets y = 20 at x = 20 exactly.
  chart.log_x = true;
  chart.log_y = true;
  chart.series = {{"p", {1, 10, 100}, {1, 10, 100}, {2, 20, 200}, {}, {}},
                  {"q", {1, 10, 100}, {20, 20, 20}, {30, 30, 30}, {}, {}}};
  crossovers = rsim::find_crossovers(chart);
  REQUIRE(crossovers.size() == 1);
  CHECK(crossovers[0].x == Approx(20.0));
  CHECK(crossovers[0].time_s == Approx(20.0));
  const std::string svg = rsim::render_series_svg(chart);
  CHECK(svg.find("crossover at 20") != std::string::npos);
  CHECK(count_of(svg, "<polygon") == 2);  // one band per series
}

TEST_CASE("the HTML report is self-contained and has every table", "[html][pi05]") {
  const auto run = rsim::test::run_scenario("pi05_thor");
  std::ostringstream out;
  rsim::write_run_html(out, run);
  const std::string html = out.str();
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  for (const char* id :
       {"ops-table", "stages-table", "compute-table", "memory-table", "ridges-table"}) {
    CHECK(html.find(std::string("<table id=\"") + id + "\" class=\"sortable\"") !=
          std::string::npos);
  }
  // One row per graph op plus the header row.
  const std::size_t ops = html.find("id=\"ops-table\"");
  const std::size_t end = html.find("</table>", ops);
  CHECK(count_of(html.substr(ops, end - ops), "<tr>") == run.graph.size() + 1);
  CHECK(count_of(html, "<svg") == 1);
  // Nothing is fetched: no src or href attributes, no external stylesheet or script.
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
}

TEST_CASE("a D-sharded matmul sits at D/2 FLOP per network byte, left of the ICI ridge",
          "[roofline]") {
  // The network roofline of How to Scale Your Model (roofline chapter):
  // X[1024, 8192]·W[8192, 16384] split over D on 2 v5e chips; each computes
  // 2 · 1024 · 4096 · 16384 FLOPs and sends its 1024 × 16384 bf16 partial sums
  // (33.55 MB) in the all-reduce: 2 · B · (D/2) · F / (2 · B · F) = D/2 = 4096 FLOP per byte,
  // under the ICI ridge 1.97e14 / 4.5e10 = 4378: network-bound.
  rsim::MatmulShape shape;
  shape.batch = 1024;
  shape.contract = 8192;
  shape.out = 16384;
  shape.compute_path = "bf16";
  rsim::MatmulPlan plan;
  plan.devices = 2;
  plan.shard = rsim::MatmulSharding::contract;
  plan.network = "ici";
  const auto result = rsim::analyze_matmul(shape, rsim::test::preset_roofs("tpu_v5e"), plan);
  const rsim::RooflineChart chart = rsim::roofline_of_matmul(result);
  REQUIRE(chart.points.size() == 2);
  CHECK(chart.points[1].intensity == Approx(4096.0));
  CHECK(chart.points[1].bound == rsim::Bound::network);
  CHECK(chart.points[1].intensity < 1.97e14 / 4.5e10);
  CHECK(chart.points[1].label == "matmul: 4096 FLOP per ici byte sent");
}

TEST_CASE("a log axis with a zero or infinite bound lists a double's decades at most", "[chart]") {
  // Issue 23 #1: log10 of 0 or inf cast to int looped 2^32 times and filled memory.
  rsim::LogAxis open;
  open.low = 5e-324;
  open.high = std::numeric_limits<double>::infinity();
  const auto decades = open.decades();
  CHECK(decades.size() <= 633);  // 10^-324 … 10^308
  rsim::LogAxis zero;
  zero.low = 0.0;
  zero.high = 1e3;
  CHECK(zero.decades().back() == 1e3);
  rsim::LogAxis usual;
  usual.low = 0.5;
  usual.high = 2e3;
  CHECK(usual.decades() == std::vector<double>{1.0, 10.0, 100.0, 1000.0});
}
