# mlcc_add_model: compile an ONNX model into a target at build time.
#
#   mlcc_add_model(<target> <model.onnx>
#                  [TARGET <mlcc-target>]   # default: avx512
#                  [NAME <c-identifier>]    # default: the file's stem, made
#                                           # a C identifier ("resnet-50" ->
#                                           # resnet_50); for model.onnx the
#                                           # folder's name
#                  [EXTERNAL_WEIGHTS]       # weights in <dir>/<n>.weights,
#                                           # not in the object
#                  [OPTIONS <args>...])     # more `mlcc compile` arguments,
#                                           # e.g. --dim batch=1
#
# At build time it runs
#   mlcc compile <model> --target <t> --name <n> -o <dir>/<n>.o --header <dir>/<n>.h
# with <dir> = ${CMAKE_CURRENT_BINARY_DIR}/mlcc_models, and adds <n>.o to the
# target's sources, <dir> to its include directories and the static mlcc
# runtime to its link libraries (PRIVATE), so the target's code says
#   #include "<n>.h"
# and calls mlcc_<n>_create/run/run_static/destroy. Editing the model or
# rebuilding the compiler recompiles the model.
#
# With EXTERNAL_WEIGHTS the model is compiled with `--weights external`: the
# weights go to <dir>/<n>.weights, whose path the variable MLCC_<n>_WEIGHTS
# (set in the caller's scope) holds, and mlcc_<n>_create takes the path of
# that file (install or ship it with the application).
#
# Call it in the directory that defines <target>: CMake builds a custom
# command's outputs only for targets of that directory.
#
# Two variables, set by whoever includes this file, say which compiler and
# runtime to use:
#   MLCC_COMPILER        an executable target (the in-tree `mlcc`, or the
#                        imported `mlcc::mlcc` of find_package(mlcc)) or the
#                        path of an mlcc executable
#   MLCC_RUNTIME_TARGET  the library target to link (`mlcc_runtime` in
#                        tree, `mlcc::runtime` when installed)
#
# Kept free of anything specific to the mlcc source tree: the same file is
# installed with the package.

include_guard(GLOBAL)

function(mlcc_add_model target model)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "EXTERNAL_WEIGHTS" "TARGET;NAME"
    "OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "mlcc_add_model: unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "mlcc_add_model: '${target}' is not a target")
  endif()
  get_target_property(target_dir ${target} SOURCE_DIR)
  if(NOT target_dir STREQUAL CMAKE_CURRENT_SOURCE_DIR)
    message(FATAL_ERROR
      "mlcc_add_model: call it in the directory that defines '${target}' "
      "(${target_dir}): CMake runs a custom command only for targets of its "
      "own directory")
  endif()
  if(NOT MLCC_COMPILER)
    message(FATAL_ERROR
      "mlcc_add_model: MLCC_COMPILER is not set; use find_package(mlcc)")
  endif()
  if(NOT MLCC_RUNTIME_TARGET)
    message(FATAL_ERROR
      "mlcc_add_model: MLCC_RUNTIME_TARGET is not set; use find_package(mlcc)")
  endif()

  if(NOT ARG_TARGET)
    set(ARG_TARGET avx512)
  endif()
  get_filename_component(model_path "${model}" ABSOLUTE
    BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model_path}")
    message(FATAL_ERROR "mlcc_add_model: no model file '${model_path}'")
  endif()
  if(NOT ARG_NAME)
    get_filename_component(stem "${model_path}" NAME_WLE)
    # The ONNX model zoo keeps each model as <name>/model.onnx, and a model
    # named "model" could not link (see below): take the folder's name.
    if(stem STREQUAL "model")
      get_filename_component(stem "${model_path}" DIRECTORY)
      get_filename_component(stem "${stem}" NAME)
    endif()
    # "resnet-50" -> resnet_50, "3d" -> _3d: the name becomes C symbols.
    string(MAKE_C_IDENTIFIER "${stem}" ARG_NAME)
    if(ARG_NAME STREQUAL "")
      message(FATAL_ERROR
        "mlcc_add_model: cannot name the model of '${model_path}'; pass NAME")
    endif()
  elseif(NOT ARG_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR
      "mlcc_add_model: NAME '${ARG_NAME}' is not a C identifier")
  endif()
  # mlcc_<name>_create/destroy/run would be the runtime's own functions
  # (mlcc_model_create, mlcc_arena_create, ...), and MLCC_<NAME>_* its
  # macros.
  string(TOLOWER "${ARG_NAME}" lower_name)
  if(lower_name MATCHES
     "^(model|arena|threadpool|tensor|dtype|status|last_error|parallel)$")
    message(FATAL_ERROR
      "mlcc_add_model: the model name '${ARG_NAME}' would clash with the "
      "mlcc runtime's mlcc_${lower_name}_* names; pass another NAME")
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/mlcc_models")
  set(object "${dir}/${ARG_NAME}.o")
  set(header "${dir}/${ARG_NAME}.h")
  set(outputs "${object}" "${header}")
  set(weights_args)
  if(ARG_EXTERNAL_WEIGHTS)
    set(weights "${dir}/${ARG_NAME}.weights")
    list(APPEND outputs "${weights}")
    set(weights_args --weights external --weights-file "${weights}")
    set(MLCC_${ARG_NAME}_WEIGHTS "${weights}" PARENT_SCOPE)
  endif()

  # Several targets of one directory may share a model; one rule makes it.
  # A second, different model under the same name would overwrite the first.
  set(key "${model_path}|${ARG_TARGET}|${ARG_OPTIONS}|${ARG_EXTERNAL_WEIGHTS}")
  get_property(previous DIRECTORY PROPERTY "MLCC_MODEL_${ARG_NAME}")
  if(previous AND NOT previous STREQUAL key)
    message(FATAL_ERROR
      "mlcc_add_model: this directory already compiles a different model "
      "named '${ARG_NAME}' (another file, TARGET, OPTIONS or "
      "EXTERNAL_WEIGHTS); give one of "
      "them another NAME")
  endif()
  if(NOT previous)
    set_property(DIRECTORY PROPERTY "MLCC_MODEL_${ARG_NAME}" "${key}")
    file(MAKE_DIRECTORY "${dir}")
    # The compiler as a DEPENDS: a target (in-tree or imported) adds a file
    # dependency on its executable, so a rebuilt or reinstalled compiler
    # recompiles the model; an in-tree target is also built first.
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND ${MLCC_COMPILER} compile "${model_path}"
        --target ${ARG_TARGET} --name ${ARG_NAME}
        -o "${object}" --header "${header}" ${weights_args} ${ARG_OPTIONS}
      DEPENDS "${model_path}" ${MLCC_COMPILER}
      COMMENT "mlcc: compiling ${model} for ${ARG_TARGET} (${ARG_NAME}.o)"
      VERBATIM)
  endif()

  set_source_files_properties("${object}" PROPERTIES
    EXTERNAL_OBJECT TRUE GENERATED TRUE)
  set_source_files_properties("${header}" PROPERTIES GENERATED TRUE)
  target_sources(${target} PRIVATE "${object}" "${header}")
  target_include_directories(${target} PRIVATE "${dir}")
  target_link_libraries(${target} PRIVATE ${MLCC_RUNTIME_TARGET})
endfunction()
