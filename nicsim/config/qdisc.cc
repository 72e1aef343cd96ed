// QdiscConfig and the scenario form of a qdisc, for every kind through its registry row
// (qdisc_kind.h, qdisc_kinds.cc): nothing here knows a particular kind.

#include "nicsim/config/qdisc.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/fields.h"
#include "nicsim/config/qdisc_internal.h"
#include "nicsim/config/qdisc_kind.h"
#include "nicsim/config/toml_util.h"
#include "nicsim/core/param_error.h"

namespace nicsim::config {

namespace {

const QdiscKind& kind_or_throw(std::string_view name) {
  if (const QdiscKind* k = find_qdisc_kind(name)) {
    return *k;
  }
  throw std::invalid_argument("unknown qdisc kind \"" + std::string(name) + "\"");
}

}  // namespace

QdiscConfig::QdiscConfig() : QdiscConfig(of_kind("pfifo_fast")) {}

QdiscConfig::QdiscConfig(const QdiscKind& kind, std::any params)
    : kind_(&kind), params_(std::move(params)) {}

QdiscConfig QdiscConfig::of_kind(std::string_view name) {
  const QdiscKind& k = kind_or_throw(name);
  return QdiscConfig(k, k.defaults());
}

const std::string& QdiscConfig::kind() const { return kind_->name; }

AnyQueue QdiscConfig::build() const { return kind_->build(*this); }

bool QdiscConfig::can_bypass() const { return kind_->can_bypass(*this); }

std::vector<QdiscCounter> QdiscConfig::counters(AnyQueue& q) const {
  return kind_->counters ? kind_->counters(q) : std::vector<QdiscCounter>{};
}

bool QdiscConfig::operator==(const QdiscConfig& o) const {
  return kind_ == o.kind_ && detail::fields_equal(kind_->fields, *this, o) &&
         (!kind_->tree.equal || kind_->tree.equal(*this, o));
}

std::vector<std::string> qdisc_kind_names() {
  std::vector<std::string> names;
  for (const QdiscKind& k : qdisc_kinds()) {
    names.push_back(k.name);
  }
  return names;
}

namespace detail {

namespace {

// The kind as written: a bare string ("fq_codel") or a table's `kind` key, with where it was.
struct KindSpelling {
  std::string name;
  Location at;
  std::string path;
};

KindSpelling read_kind_spelling(const toml::node& n, const Location& at, const std::string& path,
                                const std::string& file) {
  if (const auto* s = n.as_string()) {
    return {s->get(), at, path};
  }
  const toml::table* t = n.as_table();
  if (t == nullptr) {
    fail(at, path,
         "expected a qdisc kind (e.g. \"fq_codel\") or a table with kind = ..., got " + render(n));
  }
  const toml::node* k = t->get("kind");
  if (k == nullptr) {
    fail(where(*t, file), join_key(path, "kind"), "required (the qdisc kind, e.g. \"fq_codel\")");
  }
  KindSpelling out{"", key_location(*t, "kind", file), join_key(path, "kind")};
  out.name = to_string(*k, out.at, out.path);
  return out;
}

// The registry row the spelling names (an HTB class's qdisc must be a kind allowed as a leaf).
const QdiscKind& lookup_kind(const KindSpelling& s, bool is_leaf) {
  const QdiscKind* kind = find_qdisc_kind(s.name);
  if (kind == nullptr) {
    std::string list;
    for (const std::string& name : qdisc_kind_names()) {
      list += (list.empty() ? "" : ", ") + name;
    }
    fail(s.at, s.path, "expected one of " + list + ", got " + quote(s.name));
  }
  if (is_leaf && !kind->can_be_leaf) {
    fail(s.at, s.path, "an HTB class's qdisc cannot itself be " + kind->name + " (not supported)");
  }
  return *kind;
}

// Sets the kind's fields from the table's keys (the tree's own keys are left to it).
std::vector<Assignment<QdiscConfig>> apply_fields(QdiscConfig& q, const QdiscSource& src) {
  if (src.table == nullptr) {
    return {};
  }
  std::vector<std::string> reserved = {"kind"};
  reserved.insert(reserved.end(), q.row().tree.keys.begin(), q.row().tree.keys.end());
  auto all = read_assignments(*src.table, q.row().fields, src.path, src.file, reserved);
  for (const auto& a : all) {
    a.field->set(q, a.value);
  }
  return all;
}

// The kind's validate(); a failure is reported at the key that set the value, else at the
// table.
void validate_at_keys(const QdiscConfig& q, const std::vector<Assignment<QdiscConfig>>& all,
                      const QdiscSource& src) {
  const Validation err = q.row().validate(q);
  if (!err) {
    return;
  }
  if (const Field<QdiscConfig>* f = field_for_model_key(q.row().fields, err->key)) {
    if (const auto* a = last_assignment(all, f->key)) {
      fail(a->at, a->key_path, err->message);
    }
    fail(src.at, join_key(src.path, f->key), err->message);
  }
  const bool written = src.table != nullptr && src.table->contains(err->key);
  fail(written ? key_location(*src.table, err->key, src.file) : src.at,
       join_key(src.path, err->key), err->message);
}

}  // namespace

QdiscConfig parse_qdisc(const toml::node& n, const Location& at, const std::string& path,
                        const std::string& file, bool is_leaf) {
  const KindSpelling spelling = read_kind_spelling(n, at, path, file);
  QdiscConfig q = QdiscConfig::of_kind(lookup_kind(spelling, is_leaf).name);
  const toml::table* t = n.as_table();
  const QdiscSource src{t, t != nullptr ? where(*t, file) : at, path, file};
  const auto assignments = apply_fields(q, src);
  validate_at_keys(q, assignments, src);
  if (q.row().tree.parse) {
    q.row().tree.parse(q, src);
  }
  return q;
}

std::string dump_qdisc(const QdiscConfig& q, const std::string& path) {
  const QdiscTree& tree = q.row().tree;
  std::string out = "[" + path + "]\n";
  out += "kind = " + quote(q.kind()) + "\n";
  if (tree.dump_head) {
    out += tree.dump_head(q);
  }
  out += dump_fields(q.row().fields, q);
  if (tree.dump_tail) {
    out += tree.dump_tail(q, path);
  }
  return out;
}

}  // namespace detail
}  // namespace nicsim::config
