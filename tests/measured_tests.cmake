# Included by CTest after the discovered doctest tests (CMakeLists.txt generates the include that
# sets TILEBANK_TESTS): the test cases of the doctest suite "measured", whose outcome rests on
# tuning decisions (a candidate measured 2% faster than another), run alone (RUN_SERIAL), so no
# other test takes the cores while they measure.
execute_process(COMMAND "${TILEBANK_TESTS}" --test-suite=measured --list-test-cases
                OUTPUT_VARIABLE listed RESULT_VARIABLE listed_rc)
if(NOT listed_rc EQUAL 0)
  message(FATAL_ERROR "cannot list the measured tests of ${TILEBANK_TESTS}: ${listed}")
endif()
string(REPLACE "\n" ";" lines "${listed}")
foreach(line IN LISTS lines)
  if(line STREQUAL "" OR line MATCHES "^=+$" OR line MATCHES "^\\[doctest\\]")
    continue()
  endif()
  set_tests_properties("${line}" PROPERTIES RUN_SERIAL TRUE)
endforeach()
