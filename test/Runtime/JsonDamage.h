//===- JsonDamage.h - One damaged field of a good JSON document -*- C++ -*-===//
//
// The runtime's readers of JSON (plans, the selection catalog and table)
// are tested by damaging a good document one field at a time, each damage
// with the words its refusal must contain. `Json` is nlohmann::json or
// nlohmann::ordered_json (where line numbers in messages should follow
// the original order of keys).
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_TEST_RUNTIME_JSONDAMAGE_H
#define MSCCLC_TEST_RUNTIME_JSONDAMAGE_H

#include <string>
#include <utility>

namespace mscclc::test {

/// One damage: the field (a JSON pointer), its new value (or, when
/// `remove`, none), and what the refusal must say.
template <class Json> struct JsonDamage {
  std::string pointer;
  Json value;
  std::string needle;
  bool remove = false;

  /// The damage in a test's failure message.
  std::string describe() const {
    return pointer + (remove ? " removed" : " = " + value.dump());
  }
};

/// The damage that removes the field at `pointer` (an object's member or
/// an array's element).
template <class Json>
JsonDamage<Json> removedField(std::string pointer, std::string needle) {
  return {std::move(pointer), nullptr, std::move(needle), true};
}

/// `good` with damage `d` done.
template <class Json> Json damaged(const Json &good, const JsonDamage<Json> &d) {
  Json bad = good;
  typename Json::json_pointer at(d.pointer);
  Json &parent = bad[at.parent_pointer()];
  if (d.remove && parent.is_array())
    parent.erase(std::stoul(at.back()));
  else if (d.remove)
    parent.erase(at.back());
  else
    bad[at] = d.value;
  return bad;
}

} // namespace mscclc::test

#endif // MSCCLC_TEST_RUNTIME_JSONDAMAGE_H
