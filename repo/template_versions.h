// The engine's current version of each schedule template. An entry made with another version
// is stale: a query ignores it, validate reports it, prune removes it. The bank library takes
// this as a function so that runtimes need not link the engine.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace tilebank {

// nullopt: the template is unknown to this engine (its entries are stale too).
using TemplateVersions = std::function<std::optional<uint32_t>(std::string_view template_id)>;

}  // namespace tilebank
