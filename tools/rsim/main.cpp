// SPDX-License-Identifier: MIT
#include "cli.hpp"

#include <iostream>

int main(int argc, char** argv) { return rsim::run_cli(argc, argv, std::cout, std::cerr); }
