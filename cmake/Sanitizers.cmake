# RSIM_SANITIZE builds everything with ASan + UBSan; any report aborts the test that caused it.
if(RSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# RSIM_LIBFUZZER instruments everything for libFuzzer's coverage feedback (the targets add
# -fsanitize=fuzzer at link time); clang only.
if(RSIM_LIBFUZZER)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
