// Every function of Go's builtin set, Sprig's documented deterministic set and Helm's own set is
// registered (the names charts call).
#include <catch2/catch.hpp>

#include "core/template/engine.hpp"

using namespace emco::tmpl;

TEST_CASE("registry: Go builtins, Sprig and Helm functions are all present", "[template][registry]") {
  const char* names[] = {
      // Go
      "and", "or", "not", "len", "index", "slice", "print", "printf", "println", "html", "js", "urlquery", "call",
      "eq", "ne", "lt", "le", "gt", "ge",
      // Sprig strings
      "upper", "lower", "title", "untitle", "repeat", "substr", "nospace", "trunc", "abbrev", "abbrevboth",
      "initials", "wrap", "wrapWith", "contains", "hasPrefix", "hasSuffix", "quote", "squote", "cat", "indent",
      "nindent", "replace", "plural", "trim", "trimAll", "trimPrefix", "trimSuffix", "camelcase", "snakecase",
      "kebabcase", "swapcase", "shuffle", "toString", "toStrings", "split", "splitn", "splitList", "join",
      "sortAlpha", "atoi", "int", "int64", "float64", "toDecimal", "seq",
      // flow and encodings
      "default", "empty", "coalesce", "all", "any", "ternary", "fail", "toJson", "toPrettyJson", "toRawJson",
      "mustToJson", "mustToPrettyJson", "mustToRawJson", "fromJson", "fromJsonArray", "b64enc", "b64dec",
      "b32enc", "b32dec",
      // lists
      "list", "tuple", "first", "mustFirst", "rest", "mustRest", "last", "mustLast", "initial", "mustInitial",
      "append", "mustAppend", "push", "mustPush", "prepend", "mustPrepend", "concat", "reverse", "mustReverse",
      "uniq", "mustUniq", "without", "mustWithout", "has", "mustHas", "compact", "mustCompact", "chunk",
      "mustChunk", "until", "untilStep",
      // dicts
      "dict", "get", "set", "unset", "hasKey", "pluck", "dig", "merge", "mustMerge", "mergeOverwrite",
      "mustMergeOverwrite", "keys", "values", "pick", "omit", "deepCopy", "mustDeepCopy",
      // types
      "typeOf", "kindOf", "typeIs", "typeIsLike", "kindIs", "deepEqual",
      // math
      "add", "add1", "sub", "mul", "div", "mod", "max", "min", "biggest", "addf", "add1f", "subf", "mulf", "divf",
      "maxf", "minf", "floor", "ceil", "round", "randInt",
      // regex
      "regexMatch", "mustRegexMatch", "regexFind", "mustRegexFind", "regexFindAll", "mustRegexFindAll",
      "regexReplaceAll", "mustRegexReplaceAll", "regexReplaceAllLiteral", "mustRegexReplaceAllLiteral",
      "regexSplit", "mustRegexSplit", "regexQuoteMeta",
      // semver, crypto, random, network, paths, urls
      "semver", "semverCompare", "sha1sum", "sha256sum", "sha512sum", "adler32sum", "htpasswd", "derivePassword",
      "genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert",
      "genSignedCertWithKey", "buildCustomCert", "encryptAES", "decryptAES", "randAlphaNum", "randAlpha",
      "randNumeric", "randAscii", "randBytes", "uuidv4", "getHostByName", "base", "dir", "ext", "clean", "isAbs",
      "osBase", "osDir", "osExt", "osClean", "osIsAbs", "urlParse", "urlJoin",
      // dates
      "now", "date", "dateInZone", "htmlDate", "htmlDateInZone", "unixEpoch", "dateModify", "mustDateModify", "ago",
      "duration", "durationRound", "toDate", "mustToDate",
      // Helm
      "include", "tpl", "required", "toYaml", "mustToYaml", "fromYaml", "fromYamlArray", "toToml", "lookup"};
  Engine e;
  for (const char* n : names) {
    INFO(n);
    CHECK(e.has_function(n));
  }
  Options go_only;
  go_only.helm_functions = false;
  Engine g(go_only);
  CHECK(g.has_function("printf"));
  CHECK_FALSE(g.has_function("upper"));
  CHECK_FALSE(g.has_function("include"));
}
