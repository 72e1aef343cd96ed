#include "tools/cli.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "nicsim/config/units.h"

namespace nicsim::tools::cli {
namespace {

// nicsim's help layout: the synopsis, the explanatory text, the arguments and options
// (generated from their definitions), the footer (examples, exit status, docs).
class HelpFormatter : public CLI::Formatter {
 public:
  explicit HelpFormatter(std::string synopsis) : synopsis_(std::move(synopsis)) {
    column_width(24);
    label("Positionals", "arguments");
    label("OPTIONS", "options");
  }
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    std::ostringstream out;
    out << synopsis_ << "\n";
    if (!app->get_description().empty()) {
      out << "\n" << app->get_description() << "\n";
    }
    out << make_positionals(app) << make_groups(app, CLI::AppFormatMode::Normal);
    if (!app->get_footer().empty()) {
      out << "\n" << app->get_footer() << "\n";
    }
    std::string text = out.str();
    for (size_t at; (at = text.find("\n\n\n")) != std::string::npos;) {
      text.erase(at, 1);
    }
    return text;
  }
  // Arguments are named in the synopsis; their entries need no type after the name.
  std::string make_option_opts(const CLI::Option* opt) const override {
    return opt->get_positional() ? "" : CLI::Formatter::make_option_opts(opt);
  }

 private:
  std::string synopsis_;
};

std::string with_got(const std::string& why, const std::string& text) {
  return why + ", got '" + text + "'";
}

}  // namespace

const Command* find_command(std::string_view name) {
  for (const Command& c : commands()) {
    if (name == c.name) {
      return &c;
    }
  }
  return nullptr;
}

std::unique_ptr<CLI::App> make_app(const Command& cmd) {
  auto app = std::make_unique<CLI::App>("", std::string("nicsim ") + cmd.name);
  app->formatter(std::make_shared<HelpFormatter>(cmd.synopsis));
  app->option_defaults()->group("options");
  app->set_help_flag("-h,--help", "show this help and exit");
  return app;
}

int run(const Command& cmd, int argc, char** argv) {
  std::unique_ptr<CLI::App> app = make_app(cmd);
  // argv[0] is "nicsim", argv[1] the command: CLI11 parses the rest, up to "--".
  std::vector<std::string> args(argv + 2, argv + argc);
  Invocation inv{argc, argv, {}};
  if (const auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
    inv.command.assign(dashes + 1, args.end());
    args.erase(dashes, args.end());
  }
  const Action action = cmd.define(*app, inv);
  const std::string who = std::string("nicsim ") + cmd.name;
  auto usage_error = [&](const std::string& what) {
    std::fprintf(stderr, "%s: %s\n%s\n(nicsim %s --help explains every option)\n", who.c_str(),
                 what.c_str(), cmd.synopsis, cmd.name);
    return 2;
  };
  try {
    if (!inv.command.empty() && !cmd.takes_command) {
      throw CLI::ExtrasError({"--", inv.command.front()});
    }
    std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
    app->parse(args);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app->help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what());
  }
  try {
    return action();
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
}

const std::string& the_one(const std::vector<std::string>& given, const std::string& what,
                           const std::string& hint) {
  if (given.empty()) {
    throw UsageError("missing " + what);
  }
  if (given.size() > 1) {
    // "the scenario file" -> "only one scenario file"; "HOST (the machine ...)" -> "only one HOST"
    std::string name = what.substr(0, what.find(" ("));
    if (name.rfind("the ", 0) == 0) {
      name.erase(0, 4);
    }
    throw UsageError("only one " + name + ", got '" + given[0] + "' and '" + given[1] + "'" + hint);
  }
  return given[0];
}

CLI::Option* add_duration(CLI::App& app, const std::string& name, Duration& out,
                          const std::string& desc, Duration min, bool min_exclusive) {
  const std::string flag = name.substr(name.rfind(',') + 1);
  return app
      .add_option_function<std::string>(
          name,
          [&out, flag, min, min_exclusive](const std::string& text) {
            const auto d = config::parse_duration(text);
            if (!d) {
              throw CLI::ValidationError(flag, d.error());
            }
            if (min_exclusive && d.value() <= min) {
              throw CLI::ValidationError(
                  flag, with_got(min == Duration::zero()
                                     ? "must be positive"
                                     : "must be more than " + config::format_duration(min),
                                 text));
            }
            if (!min_exclusive && d.value() < min) {
              throw CLI::ValidationError(
                  flag,
                  with_got(min == Duration::zero() ? "expected a duration >= 0"
                                                   : "at least " + config::format_duration(min),
                           text));
            }
            out = d.value();
          },
          desc)
      ->type_name("D");
}

CLI::Option* add_duration(CLI::App& app, const std::string& name, std::optional<Duration>& out,
                          const std::string& desc) {
  const std::string flag = name.substr(name.rfind(',') + 1);
  return app
      .add_option_function<std::string>(
          name,
          [&out, flag](const std::string& text) {
            const auto d = config::parse_duration(text);
            if (!d) {
              throw CLI::ValidationError(flag, d.error());
            }
            out = d.value();
          },
          desc)
      ->type_name("D");
}

CLI::Option* add_seed(CLI::App& app, std::optional<uint64_t>& out, const std::string& desc) {
  return app
      .add_option_function<std::string>(
          "--seed",
          [&out](const std::string& v) {
            char* endp = nullptr;
            errno = 0;
            const unsigned long long s = std::strtoull(v.c_str(), &endp, 10);
            if (v.empty() || *endp != '\0' || !std::isdigit(static_cast<unsigned char>(v[0]))) {
              throw CLI::ValidationError("--seed", with_got("expected a non-negative integer", v));
            }
            // A scenario's seed is a TOML integer (signed 64 bits): a larger one could not be
            // written back into the results' config_toml.
            if (errno == ERANGE || s > static_cast<unsigned long long>(INT64_MAX)) {
              throw CLI::ValidationError("--seed",
                                         with_got("at most 9223372036854775807 (2^63 - 1)", v));
            }
            out = s;
          },
          desc)
      ->type_name("N");
}

CLI::Option* add_choice(CLI::App& app, const std::string& name, std::string& out,
                        const std::vector<std::string>& choices, const std::string& desc) {
  const std::string flag = name.substr(name.rfind(',') + 1);
  std::string names;
  std::string listed;
  for (size_t i = 0; i < choices.size(); ++i) {
    names += (i ? "|" : "") + choices[i];
    listed += (i == 0 ? "'" : i + 1 == choices.size() ? " or '" : ", '") + choices[i] + "'";
  }
  return app
      .add_option_function<std::string>(
          name,
          [&out, flag, choices, listed](const std::string& v) {
            if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
              throw CLI::ValidationError(flag, with_got("expected " + listed, v));
            }
            out = v;
          },
          desc)
      ->type_name(names);
}

}  // namespace nicsim::tools::cli
