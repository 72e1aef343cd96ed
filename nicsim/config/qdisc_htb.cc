// HTB's structure beyond key = value fields: `default` and the [[class]] tree (the "htb" row
// of the qdisc registry, qdisc_kinds.cc).

#include <string>
#include <utility>
#include <vector>

#include "nicsim/config/qdisc_internal.h"
#include "nicsim/config/qdisc_kind.h"
#include "nicsim/config/toml_util.h"

namespace nicsim::config {

using detail::Field;
using detail::Kind;

namespace {

using C = HtbClassConfig;

const std::vector<Field<C>>& class_fields() {
  using detail::field;
  using detail::unset_if_zero;
  static const std::vector<Field<C>> kFields = {
      field<C>("rate", Kind::kRate, [](C& c) -> Rate& { return c.rate; }),
      unset_if_zero(field<C>("ceil", Kind::kRate, [](C& c) -> Rate& { return c.ceil; })),
      unset_if_zero(field<C>("burst", Kind::kBytes, [](C& c) -> int64_t& { return c.burst; })),
      unset_if_zero(field<C>("cburst", Kind::kBytes, [](C& c) -> int64_t& { return c.cburst; })),
      field<C>("mtu", Kind::kBytes, [](C& c) -> int64_t& { return c.mtu; }),
      field<C>("prio", Kind::kInt, [](C& c) -> int64_t& { return c.prio; }),
      unset_if_zero(field<C>("quantum", Kind::kBytes, [](C& c) -> int64_t& { return c.quantum; }))};
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

struct ParsedClass {
  HtbClassConfig cfg;
  Location at;       // the class table
  std::string path;  // hosts.a.qdisc.class[1]
  const toml::table* table = nullptr;
};

// One [[class]] entry: id, parent, the class fields, its leaf qdisc.
ParsedClass parse_class(const toml::node& e, const Location& list_at, const std::string& path,
                        const std::string& file) {
  ParsedClass pc;
  pc.path = path;
  pc.at = e.source().begin ? detail::where(e, file) : list_at;
  pc.table = &detail::to_table(e, pc.at, pc.path);
  const toml::table& ct = *pc.table;
  const toml::node* id = ct.get("id");
  if (id == nullptr) {
    detail::fail(pc.at, detail::join_key(pc.path, "id"), "required (e.g. \"1:10\")");
  }
  pc.cfg.id = class_id_at(*id, detail::key_location(ct, "id", file), detail::join_key(path, "id"));
  if (const toml::node* parent = ct.get("parent")) {
    pc.cfg.parent = class_id_at(*parent, detail::key_location(ct, "parent", file),
                                detail::join_key(path, "parent"));
  }
  const auto assignments =
      detail::read_assignments(ct, class_fields(), path, file, {"id", "parent", "qdisc"});
  for (const auto& a : assignments) {
    a.field->set(pc.cfg, a.value);
  }
  if (detail::last_assignment(assignments, "rate") == nullptr) {
    detail::fail(pc.at, detail::join_key(path, "rate"), "required");
  }
  if (const toml::node* leaf = ct.get("qdisc")) {
    pc.cfg.leaf.push_back(detail::parse_qdisc(*leaf, detail::key_location(ct, "qdisc", file),
                                              detail::join_key(path, "qdisc"), file,
                                              /*is_leaf=*/true));
  }
  return pc;
}

// Adds the class to a trial tree so that add_class's checks (duplicate ids, missing parents,
// depth) are reported at the class and key that caused them.
void add_to_trial(algo::Htb& trial, const ParsedClass& pc, const std::string& file) {
  try {
    trial.add_class(pc.cfg.class_params());
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
    const Location kat =
        pc.table->contains(key) ? detail::key_location(*pc.table, key, file) : pc.at;
    detail::fail(kat, detail::join_key(pc.path, key), e.error().message);
  }
}

// `default` must name a leaf of the tree: sch_htb.c htb_classify sends unclassified packets to
// the direct queue (unshaped) when it names no class or an inner one, which a scenario would
// never mean.
void check_default_class(const algo::Htb& tree, uint32_t id, const Location& at,
                         const std::string& key) {
  if (!tree.has_class(id)) {
    detail::fail(at, key,
                 "names no class (" + htb_class_id(id) +
                     " is not among the [[class]] ids); unclassified packets would bypass "
                     "shaping through the direct queue");
  }
  if (tree.class_stats(id).level != 0) {
    detail::fail(at, key,
                 htb_class_id(id) +
                     " is an inner class; the default must be a leaf (unclassified packets "
                     "would bypass shaping through the direct queue)");
  }
}

void parse_tree(QdiscConfig& q, const QdiscSource& src) {
  if (src.table == nullptr) {
    return;
  }
  const toml::table& t = *src.table;
  HtbConfig& h = q.params<HtbConfig>();
  std::vector<ParsedClass> classes;
  if (const toml::node* cl = t.get("class")) {
    const Location cl_at = detail::key_location(t, "class", src.file);
    const std::string cl_path = detail::join_key(src.path, "class");
    const toml::array& arr = detail::to_array(*cl, cl_at, cl_path);
    for (size_t i = 0; i < arr.size(); ++i) {
      classes.push_back(
          parse_class(*arr.get(i), cl_at, cl_path + "[" + std::to_string(i) + "]", src.file));
    }
  }
  algo::Htb trial(h.htb);
  for (const ParsedClass& pc : classes) {
    add_to_trial(trial, pc, src.file);
    h.classes.push_back(pc.cfg);
  }
  if (const toml::node* d = t.get("default")) {
    const Location at = detail::key_location(t, "default", src.file);
    const std::string key = detail::join_key(src.path, "default");
    h.htb.default_class = class_id_at(*d, at, key);
    check_default_class(trial, h.htb.default_class, at, key);
  }
}

std::string dump_tail(const QdiscConfig& q, const std::string& path) {
  std::string out;
  for (const HtbClassConfig& c : q.params<HtbConfig>().classes) {
    out += "\n[[" + path + ".class]]\n";
    out += "id = " + detail::quote(htb_class_id(c.id)) + "\n";
    if (c.parent != 0) {
      out += "parent = " + detail::quote(htb_class_id(c.parent)) + "\n";
    }
    out += detail::dump_fields(class_fields(), c);
    if (!c.leaf.empty()) {
      out += "\n" + detail::dump_qdisc(c.leaf.front(), path + ".class.qdisc");
    }
  }
  return out;
}

}  // namespace

algo::Htb::ClassParams HtbClassConfig::class_params() const {
  algo::Htb::ClassParams cp;
  cp.id = id;
  cp.parent = parent;
  cp.rate = rate;
  cp.ceil = ceil;
  cp.burst = burst;
  cp.cburst = cburst;
  cp.mtu = mtu;
  cp.prio = prio;
  cp.quantum = quantum;
  return cp;
}

bool HtbClassConfig::operator==(const HtbClassConfig& o) const {
  return id == o.id && parent == o.parent && detail::fields_equal(class_fields(), *this, o) &&
         leaf == o.leaf;
}

std::string htb_class_id(uint32_t minor) { return algo::Htb::class_name(minor); }

QdiscTree detail::htb_tree() {
  QdiscTree t;
  t.keys = {"default", "class"};
  t.parse = parse_tree;
  t.dump_head = [](const QdiscConfig& q) {
    const uint32_t d = q.params<HtbConfig>().htb.default_class;
    return d == 0 ? std::string() : "default = " + detail::quote(htb_class_id(d)) + "\n";
  };
  t.dump_tail = dump_tail;
  t.equal = [](const QdiscConfig& a, const QdiscConfig& b) {
    const HtbConfig& x = a.params<HtbConfig>();
    const HtbConfig& y = b.params<HtbConfig>();
    return x.htb.default_class == y.htb.default_class && x.classes == y.classes;
  };
  return t;
}

}  // namespace nicsim::config
