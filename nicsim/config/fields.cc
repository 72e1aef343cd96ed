#include "nicsim/config/fields.h"

#include <string>
#include <variant>
#include <vector>

#include "nicsim/config/toml_util.h"
#include "nicsim/config/units.h"

namespace nicsim::config::detail {

Value parse_value(Kind kind, const std::vector<std::string>& choices, const toml::node& n,
                  const Location& at, const std::string& key_path) {
  switch (kind) {
    case Kind::kBool:
      return to_bool(n, at, key_path);
    case Kind::kInt:
      return to_int(n, at, key_path);
    case Kind::kDuration:
      return to_duration(n, at, key_path);
    case Kind::kRate:
      return to_rate(n, at, key_path);
    case Kind::kBytes:
      return to_bytes(n, at, key_path);
    case Kind::kPercent:
      return to_percent_ppb(n, at, key_path);
    case Kind::kEnum: {
      std::string list;
      for (const auto& c : choices) {
        list += (list.empty() ? "" : ", ") + c;
      }
      if (const auto* s = n.as_string()) {
        for (const auto& c : choices) {
          if (c == s->get()) {
            return c;
          }
        }
      }
      fail(at, key_path, "expected one of " + list + ", got " + render(n));
    }
    case Kind::kIntList: {
      const toml::array& a = to_array(n, at, key_path);
      std::vector<int64_t> out;
      for (size_t i = 0; i < a.size(); ++i) {
        const toml::node& e = *a.get(i);
        const Location ea = e.source().begin ? where(e, at.file) : at;
        out.push_back(to_int(e, ea, key_path + "[" + std::to_string(i) + "]"));
      }
      return out;
    }
  }
  fail(at, key_path, "internal error: unknown field kind");
}

std::string render_value(Kind kind, const Value& v) {
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? "true" : "false";
  }
  if (const auto* i = std::get_if<int64_t>(&v)) {
    switch (kind) {
      case Kind::kBytes:
        return quote(format_bytes(*i));
      case Kind::kPercent:
        return quote(format_percent_ppb(*i));
      default:
        return std::to_string(*i);
    }
  }
  if (const auto* d = std::get_if<Duration>(&v)) {
    return quote(format_duration(*d));
  }
  if (const auto* r = std::get_if<Rate>(&v)) {
    return quote(format_rate(*r));
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    return quote(*s);
  }
  if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) {
    std::string out = "[";
    for (size_t i = 0; i < l->size(); ++i) {
      out += (i == 0 ? "" : ", ") + std::to_string((*l)[i]);
    }
    return out + "]";
  }
  return "\"\"";
}

}  // namespace nicsim::config::detail
