// svc: Catch2 3's test macros header, over Debian's Catch2 2 (media-worker/subprojects/catch2).
#pragma once
#include <catch2/catch.hpp>
