// Where and when: the host name and wall-clock time recorded in banks and entries.
#pragma once
#include <cstdint>
#include <string>

namespace tilebank {

std::string HostName();
int64_t NowUnixMs();  // milliseconds since the Unix epoch

}  // namespace tilebank
