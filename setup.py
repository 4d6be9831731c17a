"""Builds rsim's C++ module with CMake for pip (the metadata is in pyproject.toml).

`pip install --no-build-isolation .` runs this: CMake configures a Release build of the library
and the module in build/python (kept, so a second install rebuilds only what changed), and the
module and the presets (hardware/, models/, scenarios/) go into the package, where rsim finds the
presets without the source tree.
"""

import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = ROOT / "build" / "python"
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release", "-DRSIM_BUILD_TESTS=OFF", "-DRSIM_BUILD_FUZZERS=OFF",
            "-DRSIM_BUILD_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}",
        ]
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_rsim"], check=True)
        built = sorted((build_dir / "python" / "rsim").glob("_rsim*.so"))
        if not built:
            raise RuntimeError(f"CMake built no _rsim module under {build_dir}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], target)
        for kind in ("hardware", "models", "scenarios"):
            shutil.copytree(ROOT / kind, target.parent / "share" / kind, dirs_exist_ok=True)


setup(ext_modules=[Extension("rsim._rsim", sources=[])], cmdclass={"build_ext": CMakeBuild})
