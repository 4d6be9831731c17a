// SPDX-License-Identifier: MIT
// A base header that includes a report header: cmake/CheckLayers.cmake must refuse it.
#pragma once

#include "sim/report/text.hpp"
