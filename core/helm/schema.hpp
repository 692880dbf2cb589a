#pragma once
// values.schema.json enforcement as Helm v3.17 does it (xeipuuv/gojsonschema, draft 4/6/7
// keywords charts use): type, required, properties, patternProperties,
// additionalProperties, enum, const, items (schema or tuple), min/maxItems, uniqueItems,
// minimum/maximum (and exclusive forms), multipleOf, min/maxLength, pattern (RE2),
// anyOf/oneOf/allOf/not, if/then/else, dependencies and local $ref ("#/definitions/x",
// "#/$defs/x", any JSON pointer into the same document).

#include <string>

#include "core/helm/chart.hpp"
#include "core/template/value.hpp"

namespace emco::helm {

// Problems of `values` against one schema, one "- field: description\n" line each, as
// gojsonschema words them ("- (root): name is required", "- image.tag: Invalid type.
// Expected: string, given: integer"). "" when valid. A schema that is not valid JSON gives
// an emco::Error(invalid).
std::string validate_values_schema(const tmpl::Value& values, const std::string& schema_json);

// Helm's ValidateAgainstSchema over the chart and its (enabled) subcharts: for each chart
// with problems "NAME:\n" followed by its lines; "" when everything is valid.
std::string validate_chart_schemas(const Chart& chart, const tmpl::Value& values);

}  // namespace emco::helm
