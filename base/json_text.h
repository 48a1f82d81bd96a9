// The one way this project turns JSON into text. Strings in it may come from outside (ONNX node
// and attribute names, paths, a damaged bank value) and need not be UTF-8: bytes that are not
// print as U+FFFD instead of throwing, so every file and message written from them is valid JSON.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace tilebank {

// indent -1: compact, one line; otherwise pretty-printed with `indent` spaces.
std::string DumpJson(const nlohmann::json& value, int indent = -1);

}  // namespace tilebank
