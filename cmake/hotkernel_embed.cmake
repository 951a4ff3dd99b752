# hotkernel_embed(<target> DIR <dir> GLOB <glob> NAMESPACE <ns> ARRAY <name> HEADER <path>)
# Adds <target>, which regenerates HEADER from every file under DIR matching GLOB (through
# embed_files.cmake) whenever one of them, or the generator, changes.
set(HOTKERNEL_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_files.cmake)

function(hotkernel_embed target)
  cmake_parse_arguments(PARSE_ARGV 1 E "" "DIR;GLOB;NAMESPACE;ARRAY;HEADER" "")
  file(GLOB_RECURSE inputs CONFIGURE_DEPENDS ${E_DIR}/${E_GLOB})
  file(RELATIVE_PATH shown ${CMAKE_SOURCE_DIR} ${E_DIR})
  add_custom_command(
    OUTPUT ${E_HEADER}
    COMMAND ${CMAKE_COMMAND} -DSRC_DIR=${E_DIR} -DGLOB=${E_GLOB} -DNAMESPACE=${E_NAMESPACE}
            -DARRAY=${E_ARRAY} -DOUT=${E_HEADER} -P ${HOTKERNEL_EMBED_SCRIPT}
    DEPENDS ${inputs} ${HOTKERNEL_EMBED_SCRIPT}
    COMMENT "Embedding ${shown}/")
  add_custom_target(${target} DEPENDS ${E_HEADER})
endfunction()
