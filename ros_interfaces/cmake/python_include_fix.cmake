# The message wheels' imported *__rosidl_generator_py targets carry the include
# directories of the machine that built them; point them at this machine's
# Python and NumPy headers instead (a ROS 2 install's targets are already right).
get_property(imported_targets DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(target ${imported_targets})
  if(target MATCHES "__rosidl_generator_py$")
    set_target_properties(${target} PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${Python3_INCLUDE_DIRS};${Python3_NumPy_INCLUDE_DIRS}")
  endif()
endforeach()
