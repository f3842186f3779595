//===- Json.cpp - A small JSON reader for plans ---------------------------===//

#include "mscclc/runtime/Json.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace mscclc::rt {

const Json *Json::find(const std::string &key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &it->second;
}

class JsonParser {
public:
  explicit JsonParser(const std::string &t) : text_(t) {}

  Status run(Json *out) {
    MSCCLC_TRY(value(out, 0));
    skipSpace();
    if (pos_ != text_.size())
      return error("trailing characters after the JSON value");
    return Status::ok();
  }

private:
  Status error(const std::string &what) const {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return invalidArgument(fmt::format("JSON {}:{}: {}", line, col, what));
  }

  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(const char *word) {
    size_t n = strlen(word);
    if (text_.compare(pos_, n, word) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }

  Status value(Json *out, int depth) {
    if (depth > 200)
      return error("nesting too deep");
    skipSpace();
    if (pos_ >= text_.size())
      return error("unexpected end of input");
    char c = text_[pos_];
    if (c == '{')
      return object(out, depth);
    if (c == '[')
      return array(out, depth);
    if (c == '"') {
      out->kind_ = Json::Kind::String;
      return string(&out->string_);
    }
    if (literal("true")) {
      out->kind_ = Json::Kind::Bool;
      out->bool_ = true;
      return Status::ok();
    }
    if (literal("false")) {
      out->kind_ = Json::Kind::Bool;
      return Status::ok();
    }
    if (literal("null")) {
      out->kind_ = Json::Kind::Null;
      return Status::ok();
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return number(out);
    return error(fmt::format("unexpected character '{}'", c));
  }

  Status number(Json *out) {
    size_t start = pos_;
    if (text_[pos_] == '-')
      ++pos_;
    bool isDouble = false;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c >= '0' && c <= '9') {
        ++pos_;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '+' ||
                 (c == '-' && pos_ > start)) {
        isDouble = true;
        ++pos_;
      } else {
        break;
      }
    }
    std::string token = text_.substr(start, pos_ - start);
    char *end = nullptr;
    errno = 0;
    if (!isDouble) {
      long long v = strtoll(token.c_str(), &end, 10);
      if (*end == '\0' && errno == 0 && token != "-") {
        out->kind_ = Json::Kind::Int;
        out->int_ = v;
        return Status::ok();
      }
    }
    errno = 0;
    double d = strtod(token.c_str(), &end);
    if (*end != '\0' || token.empty() || errno == ERANGE)
      return error(fmt::format("bad number '{}'", token));
    out->kind_ = Json::Kind::Double;
    out->double_ = d;
    return Status::ok();
  }

  Status string(std::string *out) {
    ++pos_; // opening quote
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"')
        return Status::ok();
      if (static_cast<unsigned char>(c) < 0x20)
        return error("control character in string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size())
        break;
      char e = text_[pos_++];
      switch (e) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '/': out->push_back('/'); break;
      case 'b': out->push_back('\b'); break;
      case 'f': out->push_back('\f'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 't': out->push_back('\t'); break;
      case 'u': {
        if (pos_ + 4 > text_.size())
          return error("short \\u escape");
        unsigned cp = unsigned(strtoul(text_.substr(pos_, 4).c_str(), nullptr, 16));
        pos_ += 4;
        // UTF-8 encode (surrogate pairs are kept as two code points).
        if (cp < 0x80) {
          out->push_back(char(cp));
        } else if (cp < 0x800) {
          out->push_back(char(0xc0 | (cp >> 6)));
          out->push_back(char(0x80 | (cp & 0x3f)));
        } else {
          out->push_back(char(0xe0 | (cp >> 12)));
          out->push_back(char(0x80 | ((cp >> 6) & 0x3f)));
          out->push_back(char(0x80 | (cp & 0x3f)));
        }
        break;
      }
      default:
        return error(fmt::format("bad escape '\\{}'", e));
      }
    }
    return error("unterminated string");
  }

  Status array(Json *out, int depth) {
    out->kind_ = Json::Kind::Array;
    ++pos_;
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return Status::ok();
    }
    for (;;) {
      Json item;
      MSCCLC_TRY(value(&item, depth + 1));
      out->array_.push_back(std::move(item));
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return Status::ok();
      }
      return error("expected ',' or ']' in array");
    }
  }

  Status object(Json *out, int depth) {
    out->kind_ = Json::Kind::Object;
    ++pos_;
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return Status::ok();
    }
    for (;;) {
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"')
        return error("expected a member name");
      std::string key;
      MSCCLC_TRY(string(&key));
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':')
        return error("expected ':' after a member name");
      ++pos_;
      Json item;
      MSCCLC_TRY(value(&item, depth + 1));
      out->object_[key] = std::move(item);
      skipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return Status::ok();
      }
      return error("expected ',' or '}' in object");
    }
  }

  const std::string &text_;
  size_t pos_ = 0;
};

Status Json::parse(const std::string &text, Json *out) {
  *out = Json();
  return JsonParser(text).run(out);
}

} // namespace mscclc::rt
