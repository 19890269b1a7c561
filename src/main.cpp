#include "cli/registry.hpp"

int main(int argc, char** argv) { return heed::cli::run(argc, argv); }
