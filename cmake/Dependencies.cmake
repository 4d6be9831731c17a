# Every dependency is a Debian 12 package (tools/install-deps.sh); nothing is fetched at configure time.
find_package(yaml-cpp 0.7 CONFIG REQUIRED)  # 0.7 exports the un-namespaced target `yaml-cpp`
find_package(Eigen3 3.4 CONFIG REQUIRED)
find_package(Boost 1.74 REQUIRED)            # Boost.Graph is header-only for what rsim uses
find_package(fmt CONFIG REQUIRED)
find_package(nlohmann_json 3 CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(TBB CONFIG REQUIRED)               # parallel sweeps (oneTBB 2021)
