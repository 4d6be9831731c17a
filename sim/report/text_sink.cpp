// SPDX-License-Identifier: MIT
#include "sim/report/text_sink.hpp"

namespace rsim {
namespace {

int sink_index() {
  static const int index = std::ios_base::xalloc();
  return index;
}

}  // namespace

std::ostream& operator<<(std::ostream& out, SinkTo to) {
  out.pword(sink_index()) = to.sink;
  return out;
}

TextSink* text_sink(std::ostream& out) { return static_cast<TextSink*>(out.pword(sink_index())); }

}  // namespace rsim
