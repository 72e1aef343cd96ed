#include "nicsim/config/qdisc.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/fields.h"
#include "nicsim/config/qdisc_internal.h"
#include "nicsim/config/toml_util.h"
#include "nicsim/config/units.h"
#include "nicsim/core/param_error.h"

namespace nicsim::config {

using detail::Field;
using detail::Kind;
using detail::Value;

namespace {

constexpr int64_t kTxQueueLen = 1000;  // DEFAULT_TX_QUEUE_LEN (include/linux/netdevice.h)
constexpr int64_t kPschedMtu = 1514;   // psched_mtu(dev) = 1500 + 14 on Ethernet

const std::vector<std::pair<std::string, QdiscKind>>& kind_names() {
  static const std::vector<std::pair<std::string, QdiscKind>> kNames = {
      {"pfifo", QdiscKind::kPfifo},
      {"bfifo", QdiscKind::kBfifo},
      {"pfifo_fast", QdiscKind::kPfifoFast},
      {"codel", QdiscKind::kCodel},
      {"fq_codel", QdiscKind::kFqCodel},
      {"tbf", QdiscKind::kTbf},
      {"htb", QdiscKind::kHtb}};
  return kNames;
}

bool is_zero(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return *i == 0;
  }
  if (const auto* d = std::get_if<Duration>(&v)) {
    return *d == Duration::zero();
  }
  if (const auto* r = std::get_if<Rate>(&v)) {
    return r->is_zero();
  }
  return false;
}

// A field whose zero value means "not set" (not written by dumps).
template <class P, class Ref>
Field<P> unset_if_zero(std::string key, Kind kind, Ref ref, std::vector<std::string> mk = {}) {
  Field<P> f = detail::field<P>(std::move(key), kind, ref, std::move(mk));
  auto get = f.get;
  f.get = [get](const P& p) {
    Value v = get(p);
    return is_zero(v) ? Value(std::monostate{}) : v;
  };
  return f;
}

using QField = Field<QdiscConfig>;
using Q = QdiscConfig;

std::vector<QField> make_fields(QdiscKind k) {
  using detail::field;
  std::vector<QField> f;
  switch (k) {
    case QdiscKind::kPfifo:
      f.push_back(
          field<Q>("limit", Kind::kInt, [](Q& q) -> int64_t& { return q.fifo.limit_packets; }));
      break;
    case QdiscKind::kBfifo:
      f.push_back(field<Q>("limit", Kind::kBytes,
                           [](Q& q) -> int64_t& { return q.fifo.limit_bytes; },
                           {"limit_bytes", "limit"}));
      break;
    case QdiscKind::kPfifoFast:
      f.push_back(
          field<Q>("limit", Kind::kInt, [](Q& q) -> int64_t& { return q.pfifo_fast.limit; }));
      f.push_back(field<Q>("per_band_limit", Kind::kBool,
                           [](Q& q) -> bool& { return q.pfifo_fast.per_band_limit; }));
      f.push_back(field<Q>("priomap", Kind::kIntList,
                           [](Q& q) -> std::array<int32_t, 16>& { return q.pfifo_fast.priomap; }));
      break;
    case QdiscKind::kCodel:
      f.push_back(field<Q>("limit", Kind::kInt, [](Q& q) -> int64_t& { return q.codel.limit; }));
      f.push_back(
          field<Q>("target", Kind::kDuration, [](Q& q) -> Duration& { return q.codel.target; }));
      f.push_back(field<Q>("interval", Kind::kDuration,
                           [](Q& q) -> Duration& { return q.codel.interval; }));
      f.push_back(field<Q>("ecn", Kind::kBool, [](Q& q) -> bool& { return q.codel.ecn; }));
      f.push_back(field<Q>("ce_threshold", Kind::kDuration,
                           [](Q& q) -> std::optional<Duration>& { return q.codel.ce_threshold; }));
      break;
    case QdiscKind::kFqCodel:
      f.push_back(field<Q>("limit", Kind::kInt, [](Q& q) -> int64_t& { return q.fq_codel.limit; }));
      f.push_back(field<Q>("flows", Kind::kInt, [](Q& q) -> int64_t& { return q.fq_codel.flows; }));
      f.push_back(field<Q>("memory_limit", Kind::kBytes,
                           [](Q& q) -> int64_t& { return q.fq_codel.memory_limit; }));
      f.push_back(field<Q>("drop_batch", Kind::kInt,
                           [](Q& q) -> int64_t& { return q.fq_codel.drop_batch; }));
      f.push_back(
          field<Q>("quantum", Kind::kBytes, [](Q& q) -> int64_t& { return q.fq_codel.quantum; }));
      f.push_back(
          field<Q>("target", Kind::kDuration, [](Q& q) -> Duration& { return q.fq_codel.target; }));
      f.push_back(field<Q>("interval", Kind::kDuration,
                           [](Q& q) -> Duration& { return q.fq_codel.interval; }));
      f.push_back(field<Q>("ecn", Kind::kBool, [](Q& q) -> bool& { return q.fq_codel.ecn; }));
      f.push_back(field<Q>("ce_threshold", Kind::kDuration, [](Q& q) -> std::optional<Duration>& {
        return q.fq_codel.ce_threshold;
      }));
      break;
    case QdiscKind::kTbf:
      f.push_back(unset_if_zero<Q>("rate", Kind::kRate, [](Q& q) -> Rate& { return q.tbf.rate; }));
      f.push_back(
          unset_if_zero<Q>("burst", Kind::kBytes, [](Q& q) -> int64_t& { return q.tbf.burst; }));
      f.push_back(
          unset_if_zero<Q>("limit", Kind::kBytes, [](Q& q) -> int64_t& { return q.tbf.limit; }));
      f.push_back(unset_if_zero<Q>("latency", Kind::kDuration,
                                   [](Q& q) -> Duration& { return q.tbf.latency; }));
      f.push_back(
          unset_if_zero<Q>("peakrate", Kind::kRate, [](Q& q) -> Rate& { return q.tbf.peakrate; }));
      f.push_back(
          unset_if_zero<Q>("mtu", Kind::kBytes, [](Q& q) -> int64_t& { return q.tbf.mtu; }));
      break;
    case QdiscKind::kHtb:
      f.push_back(field<Q>("r2q", Kind::kInt, [](Q& q) -> int64_t& { return q.htb.r2q; }));
      f.push_back(
          field<Q>("direct_qlen", Kind::kInt, [](Q& q) -> int64_t& { return q.htb.direct_qlen; }));
      f.push_back(
          field<Q>("hysteresis", Kind::kBool, [](Q& q) -> bool& { return q.htb.hysteresis; }));
      break;
  }
  return f;
}

const std::vector<QField>& fields_of(QdiscKind k) {
  static const std::vector<std::vector<QField>> kAll = [] {
    std::vector<std::vector<QField>> all;
    for (const auto& [name, kind] : kind_names()) {
      (void)name;
      all.resize(std::max<size_t>(all.size(), static_cast<size_t>(kind) + 1));
      all[static_cast<size_t>(kind)] = make_fields(kind);
    }
    return all;
  }();
  return kAll[static_cast<size_t>(k)];
}

using CField = Field<HtbClassConfig>;
using C = HtbClassConfig;

const std::vector<CField>& class_fields() {
  using detail::field;
  static const std::vector<CField> kFields = [] {
    std::vector<CField> f;
    f.push_back(field<C>("rate", Kind::kRate, [](C& c) -> Rate& { return c.rate; }));
    f.push_back(unset_if_zero<C>("ceil", Kind::kRate, [](C& c) -> Rate& { return c.ceil; }));
    f.push_back(unset_if_zero<C>("burst", Kind::kBytes, [](C& c) -> int64_t& { return c.burst; }));
    f.push_back(
        unset_if_zero<C>("cburst", Kind::kBytes, [](C& c) -> int64_t& { return c.cburst; }));
    f.push_back(field<C>("mtu", Kind::kBytes, [](C& c) -> int64_t& { return c.mtu; }));
    f.push_back(field<C>("prio", Kind::kInt, [](C& c) -> int64_t& { return c.prio; }));
    f.push_back(
        unset_if_zero<C>("quantum", Kind::kBytes, [](C& c) -> int64_t& { return c.quantum; }));
    return f;
  }();
  return kFields;
}

// Parses "1:10" (tc notation: major 1, minor in hex 1..ffff).
std::optional<uint32_t> parse_class_id(std::string_view s) {
  if (s.size() < 3 || s.substr(0, 2) != "1:" || s.size() > 6) {
    return std::nullopt;
  }
  uint32_t v = 0;
  for (char c : s.substr(2)) {
    uint32_t d = 0;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    v = v * 16 + d;
  }
  if (v == 0 || v > algo::Htb::kMaxClassId) {
    return std::nullopt;
  }
  return v;
}

uint32_t class_id_at(const toml::node& n, const Location& at, const std::string& key) {
  const std::string& s = detail::to_string(n, at, key);
  if (auto id = parse_class_id(s)) {
    return *id;
  }
  detail::fail(at, key,
               "expected a class id like \"1:10\" (tc notation: major 1, minor 1..ffff in hex), "
               "got " +
                   detail::quote(s));
}

// A validate() failure at the key that set the value, else at the table.
template <class P>
[[noreturn]] void report(const ParamError& err, const std::vector<Field<P>>& fields,
                         const std::vector<detail::Assignment<P>>& all, const Location& table_at,
                         const std::string& path) {
  if (const Field<P>* f = detail::field_for_model_key(fields, err.key)) {
    if (const auto* a = detail::last_assignment(all, f->key)) {
      detail::fail(a->at, a->key_path, err.message);
    }
    detail::fail(table_at, detail::join_key(path, f->key), err.message);
  }
  detail::fail(table_at, detail::join_key(path, err.key), err.message);
}

struct ParsedClass {
  HtbClassConfig cfg;
  Location at;       // the class table
  std::string path;  // hosts.a.qdisc.class[1]
  const toml::table* table = nullptr;
  std::vector<detail::Assignment<HtbClassConfig>> assignments;
};

}  // namespace

const char* to_string(QdiscKind k) {
  for (const auto& [name, kind] : kind_names()) {
    if (kind == k) {
      return name.c_str();
    }
  }
  return "?";
}

std::string htb_class_id(uint32_t minor) { return algo::Htb::class_name(minor); }

bool HtbClassConfig::operator==(const HtbClassConfig& o) const {
  return id == o.id && parent == o.parent && detail::fields_equal(class_fields(), *this, o) &&
         leaf == o.leaf;
}

bool QdiscConfig::operator==(const QdiscConfig& o) const {
  if (kind != o.kind || !detail::fields_equal(fields_of(kind), *this, o)) {
    return false;
  }
  if (kind == QdiscKind::kHtb) {
    return htb.default_class == o.htb.default_class && classes == o.classes;
  }
  return true;
}

bool QdiscConfig::can_bypass() const {
  switch (kind) {
    case QdiscKind::kPfifoFast:
      return true;
    case QdiscKind::kFqCodel:
      return fq_codel.limit >= 1;
    case QdiscKind::kPfifo:
      return fifo.limit_packets >= 1;
    case QdiscKind::kBfifo:
      return fifo.limit_bytes >= kPschedMtu;
    case QdiscKind::kCodel:
    case QdiscKind::kTbf:
    case QdiscKind::kHtb:
      return false;
  }
  return false;
}

AnyQueue QdiscConfig::build() const {
  switch (kind) {
    case QdiscKind::kPfifo:
    case QdiscKind::kBfifo:
      return AnyQueue::make<algo::Fifo>(fifo);
    case QdiscKind::kPfifoFast:
      return AnyQueue::make<algo::PfifoFast>(pfifo_fast);
    case QdiscKind::kCodel:
      return AnyQueue::make<algo::Codel>(codel);
    case QdiscKind::kFqCodel:
      return AnyQueue::make<algo::FqCodel>(fq_codel);
    case QdiscKind::kTbf:
      return AnyQueue::make<algo::Tbf>(tbf);
    case QdiscKind::kHtb: {
      algo::Htb h(htb);
      for (const HtbClassConfig& c : classes) {
        algo::Htb::ClassParams cp;
        cp.id = c.id;
        cp.parent = c.parent;
        cp.rate = c.rate;
        cp.ceil = c.ceil;
        cp.burst = c.burst;
        cp.cburst = c.cburst;
        cp.mtu = c.mtu;
        cp.prio = c.prio;
        cp.quantum = c.quantum;
        if (!c.leaf.empty()) {
          cp.leaf = c.leaf.front().build();
        }
        h.add_class(std::move(cp));
      }
      return AnyQueue(std::move(h));
    }
  }
  throw InvalidParams(ParamError{"kind", "unknown qdisc kind"});
}

namespace detail {

QdiscConfig parse_qdisc(const toml::node& n, const Location& at, const std::string& path,
                        const std::string& file, bool is_leaf) {
  std::string kind_name;
  Location kind_at = at;
  std::string kind_path = path;
  const toml::table* t = n.as_table();
  if (const auto* s = n.as_string()) {
    kind_name = s->get();
  } else if (t != nullptr) {
    const toml::node* k = t->get("kind");
    if (k == nullptr) {
      fail(where(*t, file), join_key(path, "kind"), "required (the qdisc kind, e.g. \"fq_codel\")");
    }
    kind_at = key_location(*t, "kind", file);
    kind_path = join_key(path, "kind");
    kind_name = to_string(*k, kind_at, kind_path);
  } else {
    fail(at, path,
         "expected a qdisc kind (e.g. \"fq_codel\") or a table with kind = ..., got " + render(n));
  }
  std::string list;
  std::optional<QdiscKind> kind;
  for (const auto& [name, k] : kind_names()) {
    list += (list.empty() ? "" : ", ") + name;
    if (name == kind_name) {
      kind = k;
    }
  }
  if (!kind) {
    fail(kind_at, kind_path, "expected one of " + list + ", got " + quote(kind_name));
  }
  if (is_leaf && *kind == QdiscKind::kHtb) {
    fail(kind_at, kind_path, "an HTB class's qdisc cannot itself be htb (not supported)");
  }

  QdiscConfig q;
  q.kind = *kind;
  if (q.kind == QdiscKind::kPfifo) {
    q.fifo.limit_packets = kTxQueueLen;  // sch_fifo.c fifo_init: limit = tx_queue_len
    q.fifo.limit_bytes = 0;
  } else if (q.kind == QdiscKind::kBfifo) {
    q.fifo.limit_packets = 0;
    q.fifo.limit_bytes = kTxQueueLen * kPschedMtu;  // tx_queue_len * psched_mtu(dev)
  }
  const auto& fields = fields_of(q.kind);
  std::vector<Assignment<QdiscConfig>> all;
  const Location table_at = t != nullptr ? where(*t, file) : at;
  if (t != nullptr) {
    std::vector<std::string> reserved = {"kind"};
    if (q.kind == QdiscKind::kHtb) {
      reserved.push_back("default");
      reserved.push_back("class");
    }
    all = read_assignments(*t, fields, path, file, reserved);
    for (const auto& a : all) {
      a.field->set(q, a.value);
      if (a.field->key == "priomap") {
        const auto& l = std::get<std::vector<int64_t>>(a.value);
        if (l.size() != 16) {
          fail(a.at, a.key_path,
               "expected 16 bands (one per skb->priority 0..15), got " + std::to_string(l.size()));
        }
        for (size_t i = 0; i < l.size(); ++i) {
          if (l[i] < 0 || l[i] > 2) {
            fail(
                a.at, a.key_path,
                "entry " + std::to_string(i) + " must be a band 0..2, got " + std::to_string(l[i]));
          }
        }
      }
    }
  }

  if (q.kind != QdiscKind::kHtb) {
    Validation v;
    switch (q.kind) {
      case QdiscKind::kPfifo:
      case QdiscKind::kBfifo:
        v = q.fifo.validate();
        break;
      case QdiscKind::kPfifoFast:
        v = q.pfifo_fast.validate();
        break;
      case QdiscKind::kCodel:
        v = q.codel.validate();
        break;
      case QdiscKind::kFqCodel:
        v = q.fq_codel.validate();
        break;
      case QdiscKind::kTbf:
        v = q.tbf.validate();
        break;
      case QdiscKind::kHtb:
        break;
    }
    if (v) {
      report(*v, fields, all, table_at, path);
    }
    return q;
  }

  // HTB: default class, then the classes in file order, each added to a trial tree so that
  // add_class's checks (duplicate ids, missing parents, depth) land on the right class.
  std::vector<ParsedClass> classes;
  Location default_at = table_at;
  if (t != nullptr) {
    if (const toml::node* d = t->get("default")) {
      default_at = key_location(*t, "default", file);
      q.htb.default_class = class_id_at(*d, default_at, join_key(path, "default"));
    }
    if (const toml::node* cl = t->get("class")) {
      const Location cl_at = key_location(*t, "class", file);
      const toml::array& arr = to_array(*cl, cl_at, join_key(path, "class"));
      for (size_t i = 0; i < arr.size(); ++i) {
        const toml::node& e = *arr.get(i);
        ParsedClass pc;
        pc.path = join_key(path, "class") + "[" + std::to_string(i) + "]";
        pc.at = e.source().begin ? where(e, file) : cl_at;
        pc.table = &to_table(e, pc.at, pc.path);
        const toml::table& ct = *pc.table;
        const toml::node* id = ct.get("id");
        if (id == nullptr) {
          fail(pc.at, join_key(pc.path, "id"), "required (e.g. \"1:10\")");
        }
        pc.cfg.id = class_id_at(*id, key_location(ct, "id", file), join_key(pc.path, "id"));
        if (const toml::node* parent = ct.get("parent")) {
          pc.cfg.parent =
              class_id_at(*parent, key_location(ct, "parent", file), join_key(pc.path, "parent"));
        }
        pc.assignments =
            read_assignments(ct, class_fields(), pc.path, file, {"id", "parent", "qdisc"});
        for (const auto& a : pc.assignments) {
          a.field->set(pc.cfg, a.value);
        }
        if (detail::last_assignment(pc.assignments, "rate") == nullptr) {
          fail(pc.at, join_key(pc.path, "rate"), "required");
        }
        if (const toml::node* leaf = ct.get("qdisc")) {
          pc.cfg.leaf.push_back(parse_qdisc(*leaf, key_location(ct, "qdisc", file),
                                            join_key(pc.path, "qdisc"), file, /*is_leaf=*/true));
        }
        classes.push_back(std::move(pc));
      }
    }
  }
  if (const Validation v = q.htb.validate()) {
    if (v->key == "default") {
      fail(default_at, join_key(path, "default"), v->message);
    }
    report(*v, fields, all, table_at, path);
  }
  algo::Htb trial(q.htb);
  for (const ParsedClass& pc : classes) {
    algo::Htb::ClassParams cp;
    cp.id = pc.cfg.id;
    cp.parent = pc.cfg.parent;
    cp.rate = pc.cfg.rate;
    cp.ceil = pc.cfg.ceil;
    cp.burst = pc.cfg.burst;
    cp.cburst = pc.cfg.cburst;
    cp.mtu = pc.cfg.mtu;
    cp.prio = pc.cfg.prio;
    cp.quantum = pc.cfg.quantum;
    try {
      trial.add_class(std::move(cp));
    } catch (const InvalidParams& e) {
      // Keys look like "class 1:10 ceil".
      std::string key = e.error().key;
      const size_t sp = key.rfind(' ');
      key = sp == std::string::npos ? key : key.substr(sp + 1);
      if (key == "classid") {
        key = "id";
      } else if (key == "leaf") {
        key = "qdisc";
      }
      const Location kat = pc.table->contains(key) ? key_location(*pc.table, key, file) : pc.at;
      fail(kat, join_key(pc.path, key), e.error().message);
    }
    q.classes.push_back(pc.cfg);
  }
  return q;
}

std::string dump_qdisc(const QdiscConfig& q, const std::string& path) {
  std::string out = "[" + path + "]\n";
  out += "kind = " + quote(to_string(q.kind)) + "\n";
  if (q.kind == QdiscKind::kHtb && q.htb.default_class != 0) {
    out += "default = " + quote(htb_class_id(q.htb.default_class)) + "\n";
  }
  out += dump_fields(fields_of(q.kind), q);
  for (const HtbClassConfig& c : q.classes) {
    out += "\n[[" + path + ".class]]\n";
    out += "id = " + quote(htb_class_id(c.id)) + "\n";
    if (c.parent != 0) {
      out += "parent = " + quote(htb_class_id(c.parent)) + "\n";
    }
    out += dump_fields(class_fields(), c);
    if (!c.leaf.empty()) {
      out += "\n" + dump_qdisc(c.leaf.front(), path + ".class.qdisc");
    }
  }
  return out;
}

}  // namespace detail
}  // namespace nicsim::config
