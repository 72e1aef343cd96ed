#pragma once
// Internal to nicsim/config: qdisc tables <-> QdiscConfig.

#include <toml++/toml.h>

#include <string>

#include "nicsim/config/error.h"
#include "nicsim/config/qdisc.h"

namespace nicsim::config::detail {

// Parses a qdisc written as a kind string ("fq_codel") or a table with `kind` and the kind's
// keys, at key path `path`; validates it completely (an HTB tree is built class by class), so
// every bad value is reported at the key that set it. A leaf (HTB class qdisc) cannot be htb.
QdiscConfig parse_qdisc(const toml::node& n, const Location& at, const std::string& path,
                        const std::string& file, bool is_leaf);

// TOML text for `q` as the table `path` ("hosts.a.qdisc"): a [path] section with every key,
// then [[path.class]] entries with their [path.class.qdisc] leaves.
std::string dump_qdisc(const QdiscConfig& q, const std::string& path);

}  // namespace nicsim::config::detail
