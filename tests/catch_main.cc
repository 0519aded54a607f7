// Catch2 2.13's main(), compiled once for all unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
