#pragma once
// Helm's values pipeline (v3.17 pkg/strvals, pkg/cli/values, pkg/chartutil):
//
//   user values = -f files merged in order (merge_maps) <- --set (parse_set) <- --set-string
//   process_dependencies(chart, user values)   conditions, tags, aliases, import-values
//   coalesce_values(chart, user values)        chart defaults under user values, subchart
//                                              values under the subchart's name, globals
//                                              copied down; a null user value deletes the key
//
// No function changes the values it is given (tmpl::Value maps have Go reference semantics),
// but a coalesced result shares the tables it did not change with the user values and the
// charts' values: changing one of them (a template's `set`) changes the other.

#include <functional>
#include <string>
#include <string_view>

#include "core/helm/chart.hpp"
#include "core/template/value.hpp"

namespace emco::helm {

// Parses one --set / --set-string argument into `dest` (a map Value, modified in place), with
// Helm's strvals syntax: `a.b=c,d=e`, lists `a={x,y}`, indexes `a[0].b=c`, escapes `\,` `\.`
// `\=`; typed values (--set): true/false, null, int64 (no leading zero), else string.
// Errors: emco::Error(invalid) "failed parsing --set data: ..." as Helm words them.
void parse_set(std::string_view text, tmpl::Value& dest, bool as_string = false);

// Helm's mergeMaps for -f files: maps merge recursively, anything else replaces.
tmpl::Value merge_maps(const tmpl::Value& a, const tmpl::Value& b);

// Receives the warnings Helm logs while coalescing, worded and prefixed as helm prints them
// ("coalesce.go:237: warning: skipped value for chart.image: Not a table.").
using ValuesLog = std::function<void(const std::string&)>;

// chartutil.CoalesceValues (merge=false) / MergeValues (merge=true). The result shares tables
// with `values` and the charts' values (see above).
tmpl::Value coalesce_values(const Chart& chart, const tmpl::Value& values, bool merge = false,
                            const ValuesLog& log = {});

// Gives `chart` and its subcharts values of their own (deep copies), so that a result coalesced
// from them shares no table with another copy of the chart.
void own_values(Chart& chart);

// chartutil.ProcessDependenciesWithMerge: drops disabled subcharts (condition, tags), renames
// aliased ones, and folds import-values into the chart's values. Modifies `chart`, whose values
// may then share tables with each other's.
void process_dependencies(Chart& chart, const tmpl::Value& values, const ValuesLog& log = {});

// Helm's Values.Table / PathValue lookups on dotted paths; nullptr when absent.
const tmpl::Value* values_table(const tmpl::Value& values, std::string_view path);

}  // namespace emco::helm
