# Included by CTest (CMakeLists.txt generates the include that sets TILEBANK_TESTS and
# TILEBANK_TEST_ENVIRONMENT): every doctest case of the suite becomes one CTest entry under its own
# name, whatever characters the name holds (doctest's own discovery split names at ';' into entries
# that ran nothing and passed). tilebank_tests fails a run whose filter selects no case
# (tests/test_main.cpp), so an entry that matches nothing cannot pass.
# The cases of the doctest suite "measured", whose outcome rests on tuning decisions (a candidate
# measured 2% faster than another), run alone (RUN_SERIAL): no other test takes the cores then.
function(tilebank_list_cases out)
  execute_process(COMMAND "${TILEBANK_TESTS}" ${ARGN} --list-test-cases --no-colors=true
                  OUTPUT_VARIABLE listed RESULT_VARIABLE listed_rc)
  if(NOT listed_rc EQUAL 0)
    message(FATAL_ERROR "cannot list the test cases of ${TILEBANK_TESTS}: ${listed}")
  endif()
  string(REPLACE ";" "\\;" listed "${listed}")  # a ';' in a name stays in the name
  string(REPLACE "\n" ";" lines "${listed}")
  set(cases)
  foreach(line IN LISTS lines)
    if(line STREQUAL "" OR line MATCHES "^=+$" OR line MATCHES "^\\[doctest\\]")
      continue()
    endif()
    string(REPLACE ";" "\\;" line "${line}")
    list(APPEND cases "${line}")
  endforeach()
  set(${out} "${cases}" PARENT_SCOPE)
endfunction()

tilebank_list_cases(all_cases)
tilebank_list_cases(measured_cases --test-suite=measured)
foreach(name IN LISTS all_cases)
  # doctest's filters split at ',' unless escaped; '*' and '?' in a name match themselves too.
  string(REPLACE "," "\\," filter "${name}")
  add_test("${name}" "${TILEBANK_TESTS}" "--test-case=${filter}")
  set_tests_properties("${name}" PROPERTIES ENVIRONMENT "${TILEBANK_TEST_ENVIRONMENT}")
endforeach()
foreach(name IN LISTS measured_cases)
  set_tests_properties("${name}" PROPERTIES RUN_SERIAL TRUE)
endforeach()
