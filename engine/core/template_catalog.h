// The engine's schedule templates and their versions. Bump a template's version whenever its
// knobs or their meaning change: bank entries made with another version become stale.
#pragma once
#include "repo/template_versions.h"

namespace tilebank {

TemplateVersions EngineTemplateVersions();

}  // namespace tilebank
