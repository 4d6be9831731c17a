// SPDX-License-Identifier: MIT
#pragma once

#include <compare>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace rsim {

/// A physical quantity held in SI base units (byte, second, FLOP, hertz).
/// Construction is explicit and only same-dimension arithmetic is defined, so a size can never be
/// added to a rate by accident; `.si()` is the way out for report code.
template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double si_value) : si_(si_value) {}
  [[nodiscard]] constexpr double si() const { return si_; }

  constexpr Quantity operator+(Quantity other) const { return Quantity(si_ + other.si_); }
  constexpr Quantity operator-(Quantity other) const { return Quantity(si_ - other.si_); }
  constexpr Quantity& operator+=(Quantity other) {
    si_ += other.si_;
    return *this;
  }
  constexpr Quantity operator*(double factor) const { return Quantity(si_ * factor); }
  constexpr Quantity operator/(double divisor) const { return Quantity(si_ / divisor); }
  /// Ratio of two quantities of one dimension (dimensionless).
  constexpr double operator/(Quantity other) const { return si_ / other.si_; }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double si_ = 0.0;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double factor, Quantity<Tag> quantity) {
  return quantity * factor;
}

/// A quantity or none, in one double (NaN: none), with std::optional's interface: for the inner
/// loop of a sweep, where GCC keeps it in a register, whereas a std::optional<Quantity> goes
/// through the stack and its reload stalls on the two narrower stores that built it. rsim's
/// figures are never NaN, so a NaN quantity put in reads as none.
template <class Tag>
class OptionalQuantity {
 public:
  constexpr OptionalQuantity() = default;
  constexpr OptionalQuantity(std::nullopt_t /*none*/) {}  // NOLINT: implicit, as std::optional's
  constexpr OptionalQuantity(Quantity<Tag> value) : value_(value) {}  // NOLINT: likewise
  [[nodiscard]] constexpr bool has_value() const { return value_.si() == value_.si(); }
  constexpr explicit operator bool() const { return has_value(); }
  constexpr Quantity<Tag> operator*() const { return value_; }
  constexpr const Quantity<Tag>* operator->() const { return &value_; }

 private:
  Quantity<Tag> value_{std::numeric_limits<double>::quiet_NaN()};
};

struct BytesTag {};
struct SecondsTag {};
struct FlopsTag {};
struct BytesPerSecondTag {};
struct FlopsPerSecondTag {};
struct HertzTag {};

using Bytes = Quantity<BytesTag>;                    ///< bytes
using Seconds = Quantity<SecondsTag>;                ///< seconds
using Flops = Quantity<FlopsTag>;                    ///< floating-point (or integer) operations
using BytesPerSecond = Quantity<BytesPerSecondTag>;  ///< bytes per second
using FlopsPerSecond = Quantity<FlopsPerSecondTag>;  ///< operations per second
using Hertz = Quantity<HertzTag>;                    ///< cycles per second
using OptionalBytes = OptionalQuantity<BytesTag>;    ///< bytes or none
using OptionalFlops = OptionalQuantity<FlopsTag>;    ///< operations or none

/// Time to move `bytes` at `bandwidth`: T_comms = bytes / bandwidth.
constexpr Seconds operator/(Bytes bytes, BytesPerSecond bandwidth) {
  return Seconds(bytes.si() / bandwidth.si());
}
/// Time to execute `flops` at `peak`: T_math = FLOPs / peak FLOP/s.
constexpr Seconds operator/(Flops flops, FlopsPerSecond peak) {
  return Seconds(flops.si() / peak.si());
}

/// Arithmetic intensity in FLOP/byte: FLOPs / bytes moved (scaling book, "Rooflines").
constexpr double intensity(Flops flops, Bytes bytes) { return flops.si() / bytes.si(); }
/// Critical (ridge) intensity in FLOP/byte: peak FLOP/s / bandwidth.
constexpr double ridge(FlopsPerSecond peak, BytesPerSecond bandwidth) {
  return peak.si() / bandwidth.si();
}

/// The dimensions a unit string in YAML or on the command line may carry.
enum class Dimension { bytes, seconds, flops, byte_rate, flop_rate, frequency };

/// Human name of a dimension plus an example, for error messages ("a byte rate like \"273 GB/s\"").
std::string describe(Dimension dimension);

/// Parses "<number> <prefix><unit>" into SI, e.g. "273 GB/s" → 2.73e11, "228 KiB" → 233472,
/// "2 us" → 2e-6. Decimal prefixes (k M G T P E) are powers of 10, binary ones (Ki Mi Gi Ti Pi)
/// powers of 2 and allowed on bytes only; m/u/µ/n are allowed on seconds only; "b/s" is bits per
/// second (÷ 8). Returns nullopt when the text is not a positive finite quantity of `expected`.
std::optional<double> parse_quantity(std::string_view text, Dimension expected);

/// Formats an SI value with 4 significant figures and a decimal prefix: 2.73e11 B/s → "273 GB/s".
/// Times of 1,000 s and more print in minutes, hours or days ("48 h", not "172.8 ks").
std::string format_quantity(double si_value, Dimension dimension);

/// Formats a capacity, in binary units when it is an exact multiple of them: "228 KiB", "128 GB".
std::string format_capacity(double bytes);

/// Formats a plain number with 4 significant figures, using k/M/G/T suffixes past 10,000.
std::string format_count(double value);

/// Formats a parameter count as the field writes it: "3.353B", "300.1M", "1.2T" (B: billions).
std::string format_parameters(double count);

/// Formats a plain number without an exponent, as a reader checks it by hand: whole numbers in
/// full, with thousands separators from 10,000 on ("129,922,760,704", "1289"), others with `digits`
/// significant figures
/// ("1289", "0.08333"); values of 10^4 and more round to whole numbers ("11,480").
std::string format_plain(double value, int digits = 4);

}  // namespace rsim
