# RSIM_SANITIZE builds everything with ASan + UBSan; any report aborts the test that caused it.
if(RSIM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
