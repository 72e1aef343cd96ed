#pragma once
// Internal to nicsim/config: the qdisc registry. One QdiscKind row per kind (qdisc_kinds.cc)
// carries everything the rest of the tree needs to know about that kind; parse, dump,
// equality, build and bypass (qdisc.cc) only go through the row. docs/qdiscs.md: adding a kind.

#include <toml++/toml.h>

#include <any>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "nicsim/config/error.h"
#include "nicsim/config/fields.h"
#include "nicsim/config/qdisc.h"
#include "nicsim/core/param_error.h"

namespace nicsim::config {

// Where a qdisc table was found, for kinds that read more than key = value fields.
struct QdiscSource {
  const toml::table* table = nullptr;  // nullptr: the qdisc was written as a bare kind string
  Location at;                         // the table (or the string)
  std::string path;                    // key path, e.g. "hosts.a.qdisc"
  std::string file;
};

// A kind's structure beyond its fields (HTB's default class and class tree). Empty for
// kinds that are fields only.
struct QdiscTree {
  std::vector<std::string> keys;  // the table keys it reads itself ("default", "class")
  // Reads those keys into q after the fields are set and validated; throws ConfigError at the
  // key that is wrong.
  std::function<void(QdiscConfig& q, const QdiscSource& src)> parse;
  // TOML lines written before the fields (in the [path] table) and after them (sub-tables).
  std::function<std::string(const QdiscConfig& q)> dump_head;
  std::function<std::string(const QdiscConfig& q, const std::string& path)> dump_tail;
  std::function<bool(const QdiscConfig& a, const QdiscConfig& b)> equal;
};

struct QdiscKind {
  std::string name;  // the tc name, as written in scenario files
  // The kind's Params with this project's defaults for it (a std::any holding the type that
  // QdiscConfig::params<P>() returns).
  std::function<std::any()> defaults;
  std::vector<detail::Field<QdiscConfig>> fields;  // key = value settings, in dump order
  std::function<Validation(const QdiscConfig&)> validate;
  std::function<AnyQueue(const QdiscConfig&)> build;
  std::function<bool(const QdiscConfig&)> can_bypass;            // TCQ_F_CAN_BYPASS for this config
  std::function<std::vector<QdiscCounter>(AnyQueue&)> counters;  // empty: none of its own
  bool can_be_leaf = true;                                       // may be an HTB class's qdisc
  QdiscTree tree;
};

// The registry, in the order kinds are listed in messages and docs.
const std::vector<QdiscKind>& qdisc_kinds();
// The row named `name`, or nullptr.
const QdiscKind* find_qdisc_kind(std::string_view name);

namespace detail {

// HTB's default class and class tree (qdisc_htb.cc).
QdiscTree htb_tree();

// A field of the kind's Params P (reached by ref(P&) -> T&) as a field of QdiscConfig.
template <class P, class Ref>
Field<QdiscConfig> qfield(std::string key, Kind kind, Ref ref,
                          std::vector<std::string> model_keys = {}) {
  return field<QdiscConfig>(
      std::move(key), kind, [ref](QdiscConfig& q) -> decltype(auto) { return ref(q.params<P>()); },
      std::move(model_keys));
}

// A field whose zero value means "not set" (not written by dumps).
template <class P>
Field<P> unset_if_zero(Field<P> f) {
  auto get = f.get;
  f.get = [get](const P& p) {
    const Value v = get(p);
    const bool zero = std::visit(
        [](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            return x == 0;
          } else if constexpr (std::is_same_v<T, Duration>) {
            return x == Duration::zero();
          } else if constexpr (std::is_same_v<T, Rate>) {
            return x.is_zero();
          } else {
            return false;
          }
        },
        v);
    return zero ? Value(std::monostate{}) : v;
  };
  return f;
}

// The row for a kind whose Params are P and whose element is algo E built from P: fields,
// validate (P::validate) and build (E(P)) follow from the types; `bypass` decides
// TCQ_F_CAN_BYPASS.
template <class E, class P = typename E::Params>
QdiscKind simple_kind(std::string name, std::type_identity_t<std::function<P()>> defaults,
                      std::vector<Field<QdiscConfig>> fields,
                      std::type_identity_t<std::function<bool(const P&)>> bypass) {
  QdiscKind k;
  k.name = std::move(name);
  k.defaults = [defaults] { return std::any(defaults()); };
  k.fields = std::move(fields);
  k.validate = [](const QdiscConfig& q) { return q.params<P>().validate(); };
  k.build = [](const QdiscConfig& q) { return AnyQueue::make<E>(q.params<P>()); };
  k.can_bypass = [bypass](const QdiscConfig& q) { return bypass(q.params<P>()); };
  return k;
}

}  // namespace detail
}  // namespace nicsim::config
