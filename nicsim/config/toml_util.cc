#include "nicsim/config/toml_util.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/units.h"

namespace nicsim::config::detail {
namespace {

bool bare_key(std::string_view k) {
  if (k.empty()) {
    return false;
  }
  return std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::string toml_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789ABCDEF";
          out += "\\u00";
          out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xF];
          out += kHex[static_cast<unsigned char>(c) & 0xF];
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string format_double_impl(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) {
    return "?";
  }
  std::string s(buf, end);
  if (s.find_first_of(".eEn") == std::string::npos) {
    s += ".0";  // keep it visibly a float: 1.0, not 1
  }
  return s;
}

template <class T>
T checked_unit(const toml::node& n, const Location& at, const std::string& key,
               Parsed<T> (*parse)(std::string_view), const char* what, const char* example) {
  if (const auto* s = n.as_string()) {
    Parsed<T> p = parse(s->get());
    if (!p) {
      fail(at, key, p.error());
    }
    return p.value();
  }
  fail(at, key,
       std::string("expected ") + what + ", got " + render(n) + " (write it as a string, e.g. \"" +
           example + "\")");
}

}  // namespace

std::string quote(std::string_view s) { return toml_quote(s); }

std::string format_double(double v) { return format_double_impl(v); }

Location key_location(const toml::table& t, std::string_view key, const std::string& file) {
  for (auto&& [k, v] : t) {
    if (k.str() == key) {
      return where(k, v, file);
    }
  }
  return where(t, file);
}

namespace {

const std::vector<std::pair<std::string, uint8_t>>& dscp_names() {
  static const std::vector<std::pair<std::string, uint8_t>> kNames = [] {
    std::vector<std::pair<std::string, uint8_t>> n = {{"BE", 0}, {"LE", 1}, {"EF", 46}, {"VA", 44}};
    for (int i = 0; i < 8; ++i) {
      n.emplace_back("CS" + std::to_string(i), static_cast<uint8_t>(8 * i));
    }
    for (int x = 1; x <= 4; ++x) {
      for (int y = 1; y <= 3; ++y) {
        n.emplace_back("AF" + std::to_string(x) + std::to_string(y),
                       static_cast<uint8_t>(8 * x + 2 * y));
      }
    }
    return n;
  }();
  return kNames;
}

}  // namespace

std::optional<uint8_t> dscp_from_name(std::string_view name) {
  for (const auto& [n, v] : dscp_names()) {
    if (n == name) {
      return v;
    }
  }
  return std::nullopt;
}

std::string dscp_to_toml(uint8_t dscp) {
  for (const auto& [n, v] : dscp_names()) {  // BE before CS0: 0 is written "BE"
    if (v == dscp) {
      return toml_quote(n);
    }
  }
  return std::to_string(dscp);
}

Location where(const toml::source_region& r, const std::string& file) {
  Location l;
  l.file = file;
  if (r.begin) {
    l.line = static_cast<int64_t>(r.begin.line);
    l.column = static_cast<int64_t>(r.begin.column);
  }
  return l;
}

Location where(const toml::node& n, const std::string& file) { return where(n.source(), file); }

Location where(const toml::key& k, const toml::node& v, const std::string& file) {
  if (k.source().begin) {
    return where(k.source(), file);
  }
  return where(v, file);
}

std::string join_key(std::string_view prefix, std::string_view key) {
  std::string k = bare_key(key) ? std::string(key) : toml_quote(key);
  if (prefix.empty()) {
    return k;
  }
  return std::string(prefix) + "." + k;
}

std::string render(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return toml_quote(n.as_string()->get());
    case toml::node_type::integer:
      return std::to_string(n.as_integer()->get());
    case toml::node_type::floating_point:
      return format_double_impl(n.as_floating_point()->get());
    case toml::node_type::boolean:
      return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
      return "a date/time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

void fail(const Location& at, const std::string& key, const std::string& message) {
  throw ConfigError(at, key, message);
}

std::vector<Entry> in_source_order(const toml::table& t) {
  std::vector<Entry> out;
  out.reserve(t.size());
  for (auto&& [k, v] : t) {
    out.push_back(Entry{&k, &v});
  }
  auto pos = [](const Entry& e) {
    const toml::source_region& r = e.key->source().begin ? e.key->source() : e.node->source();
    return std::pair<uint64_t, uint64_t>(r.begin.line, r.begin.column);
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const Entry& a, const Entry& b) { return pos(a) < pos(b); });
  return out;
}

bool to_bool(const toml::node& n, const Location& at, const std::string& key) {
  if (const auto* b = n.as_boolean()) {
    return b->get();
  }
  fail(at, key, "expected a boolean, got " + render(n));
}

int64_t to_int(const toml::node& n, const Location& at, const std::string& key) {
  if (const auto* i = n.as_integer()) {
    return i->get();
  }
  fail(at, key, "expected an integer, got " + render(n));
}

double to_number(const toml::node& n, const Location& at, const std::string& key) {
  if (const auto* i = n.as_integer()) {
    return static_cast<double>(i->get());
  }
  if (const auto* f = n.as_floating_point()) {
    return f->get();
  }
  fail(at, key, "expected a number, got " + render(n));
}

const std::string& to_string(const toml::node& n, const Location& at, const std::string& key) {
  if (const auto* s = n.as_string()) {
    return s->get();
  }
  fail(at, key, "expected a string, got " + render(n));
}

Duration to_duration(const toml::node& n, const Location& at, const std::string& key) {
  return checked_unit<Duration>(n, at, key, &parse_duration,
                                "a duration with a unit (ns, us, ms, s)", "5ms");
}

Rate to_rate(const toml::node& n, const Location& at, const std::string& key) {
  return checked_unit<Rate>(n, at, key, &parse_rate,
                            "a rate with a unit (bit, kbit, Mbit, Gbit, Tbit, optionally /s)",
                            "100Mbit");
}

int64_t to_bytes(const toml::node& n, const Location& at, const std::string& key) {
  return checked_unit<int64_t>(n, at, key, &parse_bytes,
                               "a byte size with a unit (B, kB, MB, GB, KiB, MiB, GiB)", "1514B");
}

int64_t to_percent_ppb(const toml::node& n, const Location& at, const std::string& key) {
  return checked_unit<int64_t>(n, at, key, &parse_percent_ppb, "a percentage", "0.5%");
}

const toml::table& to_table(const toml::node& n, const Location& at, const std::string& key) {
  if (const auto* t = n.as_table()) {
    return *t;
  }
  fail(at, key, "expected a table, got " + render(n));
}

const toml::array& to_array(const toml::node& n, const Location& at, const std::string& key) {
  if (const auto* a = n.as_array()) {
    return *a;
  }
  fail(at, key, "expected an array, got " + render(n));
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = 4;
  for (const std::string& c : candidates) {
    // Levenshtein distance, two rows.
    std::vector<size_t> prev(c.size() + 1);
    std::vector<size_t> cur(c.size() + 1);
    for (size_t j = 0; j <= c.size(); ++j) {
      prev[j] = j;
    }
    for (size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= c.size(); ++j) {
        const size_t sub = prev[j - 1] + (word[i - 1] == c[j - 1] ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      }
      std::swap(prev, cur);
    }
    size_t d = prev[c.size()];
    if (word.size() >= 3 && c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
      d = std::min<size_t>(d, 1);  // "turbo" -> "turbo_mode"
    }
    if (d < best_d && d < std::max<size_t>(word.size(), 2)) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

TableReader::TableReader(const toml::table& t, std::string path, std::string file)
    : t_(t), path_(std::move(path)), file_(std::move(file)) {}

Location TableReader::key_location(std::string_view key) const {
  return detail::key_location(t_, key, file_);
}

const toml::node* TableReader::take(std::string_view key) {
  known_.emplace(key);
  const toml::node* n = t_.get(key);
  if (n != nullptr) {
    used_.emplace(key);
  }
  return n;
}

std::optional<bool> TableReader::opt_bool(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return std::nullopt;
  }
  return to_bool(*n, key_location(key), key_path(key));
}

std::optional<int64_t> TableReader::opt_int(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return std::nullopt;
  }
  return to_int(*n, key_location(key), key_path(key));
}

std::optional<std::string> TableReader::opt_string(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return std::nullopt;
  }
  return to_string(*n, key_location(key), key_path(key));
}

std::optional<Duration> TableReader::opt_duration(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return std::nullopt;
  }
  return to_duration(*n, key_location(key), key_path(key));
}

std::optional<Rate> TableReader::opt_rate(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return std::nullopt;
  }
  return to_rate(*n, key_location(key), key_path(key));
}

std::optional<int64_t> TableReader::opt_bytes(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return std::nullopt;
  }
  return to_bytes(*n, key_location(key), key_path(key));
}

std::optional<int64_t> TableReader::opt_percent_ppb(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return std::nullopt;
  }
  return to_percent_ppb(*n, key_location(key), key_path(key));
}

const toml::table* TableReader::opt_table(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return nullptr;
  }
  return &to_table(*n, key_location(key), key_path(key));
}

const toml::array* TableReader::opt_array(std::string_view key) {
  const toml::node* n = take(key);
  if (n == nullptr) {
    return nullptr;
  }
  return &to_array(*n, key_location(key), key_path(key));
}

void TableReader::missing(std::string_view key) const {
  fail(location(), key_path(key), "required");
}

void TableReader::finish() const {
  for (const Entry& e : in_source_order(t_)) {
    if (used_.count(e.key->str()) != 0) {
      continue;
    }
    std::vector<std::string> known(known_.begin(), known_.end());
    const std::string guess = closest(e.key->str(), known);
    fail(where(*e.key, *e.node, file_), key_path(e.key->str()),
         "unknown key" + (guess.empty() ? std::string() : " (did you mean '" + guess + "'?)"));
  }
}

}  // namespace nicsim::config::detail
