//===- Json.h - A small JSON reader for plans -----------------*- C++ -*-===//
//
// The runtime reads the compiler's plan without a JSON dependency (the GPU
// machines have none installed). Integers keep all 64 bits; errors give the
// line and column.
//
//===----------------------------------------------------------------------===//

#ifndef MSCCLC_RUNTIME_JSON_H
#define MSCCLC_RUNTIME_JSON_H

#include "mscclc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mscclc::rt {

class Json {
public:
  enum class Kind { Null, Bool, Int, Double, String, Array, Object };

  static Status parse(const std::string &text, Json *out);

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isInt() const { return kind_ == Kind::Int; }
  bool isNumber() const { return kind_ == Kind::Int || kind_ == Kind::Double; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }
  bool isBool() const { return kind_ == Kind::Bool; }

  bool asBool() const { return bool_; }
  int64_t asInt() const { return kind_ == Kind::Double ? int64_t(double_) : int_; }
  double asDouble() const { return kind_ == Kind::Int ? double(int_) : double_; }
  const std::string &asString() const { return string_; }
  const std::vector<Json> &items() const { return array_; }
  const std::map<std::string, Json> &members() const { return object_; }

  /// Member lookup; nullptr when absent or not an object.
  const Json *find(const std::string &key) const;

private:
  friend class JsonParser;
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  std::vector<Json> array_;
  std::map<std::string, Json> object_;
};

} // namespace mscclc::rt

#endif // MSCCLC_RUNTIME_JSON_H
