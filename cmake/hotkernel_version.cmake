# hotkernel_version(<out-var>): the version string `hotkernel --version` and every result report.
# One scheme, git tags, whoever builds:
# - the wheel: scikit-build-core's, which setuptools-scm read from git (pyproject.toml);
# - any other build in a git checkout: the same scheme read here (setuptools-scm's default):
#   at a tag vX.Y.Z, X.Y.Z; N commits after it, X.Y.(Z+1).devN+g<commit>; with no tag yet,
#   0.1.devN+g<commit>, N the commits in the history;
# - a tree without git: the project's VERSION.
function(hotkernel_version out)
  if(DEFINED SKBUILD_PROJECT_VERSION_FULL)
    set(${out} ${SKBUILD_PROJECT_VERSION_FULL} PARENT_SCOPE)
    return()
  endif()
  set(version ${PROJECT_VERSION})
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --long --abbrev=9 --match "v[0-9]*"
                    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE described
                    RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(rc EQUAL 0 AND described MATCHES "^v([0-9]+)\\.([0-9]+)\\.([0-9]+)-([0-9]+)-(g[0-9a-f]+)$")
      if(CMAKE_MATCH_4 EQUAL 0)
        set(version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
      else()
        math(EXPR next "${CMAKE_MATCH_3} + 1")
        set(version "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${next}.dev${CMAKE_MATCH_4}+${CMAKE_MATCH_5}")
      endif()
    else()
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-list --count HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                      OUTPUT_VARIABLE count RESULT_VARIABLE rc1 OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=9 HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                      OUTPUT_VARIABLE commit RESULT_VARIABLE rc2 OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(rc1 EQUAL 0 AND rc2 EQUAL 0)
        set(version "0.1.dev${count}+g${commit}")
      endif()
    endif()
  endif()
  set(${out} ${version} PARENT_SCOPE)
endfunction()
