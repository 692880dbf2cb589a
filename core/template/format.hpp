#pragma once
// Go's fmt and strconv number formatting for template values (internal to core/template).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/template/value.hpp"

namespace emco::tmpl {

// strconv.FormatFloat(f, 'g', -1, bit_size): what %v prints for a float64 ("1e+06", "3.14");
// with bit_size 32 the shortest digits of f as a float32 ("3.1415927").
std::string format_float_g(double f, int bit_size = 64);
// encoding/json's float encoding ("1000000", "1e-07" -> "1e-7", "1e+21").
std::string format_json_float(double f);
// fmt.Sprint(v) / %v of one value.
std::string format_value(const Value& v);
void append_value(std::string& out, const Value& v);
// fmt.Sprint(args...): spaces between operands when neither is a string.
std::string go_sprint(const std::vector<Value>& args);
// fmt.Sprintln(args...): spaces between all operands, newline at the end.
std::string go_sprintln(const std::vector<Value>& args);
// fmt.Sprintf(format, args...) with Go's verbs, flags, widths, precision and error notation.
std::string go_sprintf(std::string_view format, const std::vector<Value>& args);
// strconv.Quote.
std::string go_quote(std::string_view s);

}  // namespace emco::tmpl
