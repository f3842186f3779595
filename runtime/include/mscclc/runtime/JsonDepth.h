//===- JsonDepth.h - How deep a JSON document nests -----------*- C++ -*-===//
//
// JSON parsers recurse once per level of nesting (nlohmann's in the
// runtime, llvm::json in the compiler), so a document nested tens of
// thousands deep overflows the stack before any check of its content
// runs. Readers of untrusted JSON scan its depth first with this loop,
// which does not recurse, and refuse what is too deep.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_JSONDEPTH_H
#define MSCCLC_RUNTIME_JSONDEPTH_H

#include <algorithm>
#include <string_view>

namespace mscclc {

/// How deep arrays and objects nest in JSON `text` (strings skipped); for
/// text that is no JSON, a number that means nothing.
inline int jsonNestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i; // the escaped character, a quote among them
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

} // namespace mscclc

#endif // MSCCLC_RUNTIME_JSONDEPTH_H
