// svc: Catch2 3's Catch::Session header, over Debian's Catch2 2 (media-worker/subprojects/catch2).
// Included only by the worker's test/src/tests.cpp, which has its own main(): Catch2 2 puts its
// implementation in the one file that includes it with CATCH_CONFIG_RUNNER defined.
#pragma once
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
