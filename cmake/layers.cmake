# The layers of the source tree, lowest first: each is one folder and one static library that links
# only the layers it names here, so it may include only their headers (and, through them, what they
# use). cmake/check_layers.cmake fails the build on an include that reaches higher; docs/ARCHITECTURE.md
# draws the map. Unit tests (*_test.cpp) sit beside their code but link into tilebank_tests, above all.
set(TILEBANK_LAYERS base repo core gdat backends kernels catalog ir passes runtime tuning quantize jobs batch report)
set(TILEBANK_LAYER_base_DIR base)                 # Status and Result, JSON text, child processes
set(TILEBANK_LAYER_base_USES "")
set(TILEBANK_LAYER_repo_DIR repo)                 # the bank: store, keys, entries, lookup, merge, diff
set(TILEBANK_LAYER_repo_USES base)
set(TILEBANK_LAYER_core_DIR engine/core)          # op specs, dtypes, tensors, target facts, policy spaces
set(TILEBANK_LAYER_core_USES repo)
set(TILEBANK_LAYER_gdat_DIR engine/gdat)          # gradient profiles, AllReduce cost, fusion plans
set(TILEBANK_LAYER_gdat_USES core)
set(TILEBANK_LAYER_backends_DIR engine/backends)  # Halide, oneDNN, SIMD and OpenBLAS implementations
set(TILEBANK_LAYER_backends_USES core)
set(TILEBANK_LAYER_kernels_DIR engine/kernels)    # the registry: every ONNX op's kernels
set(TILEBANK_LAYER_kernels_USES backends)
set(TILEBANK_LAYER_catalog_DIR engine/catalog)    # tuned implementations per op, built-in choices, checks
set(TILEBANK_LAYER_catalog_USES kernels gdat)
set(TILEBANK_LAYER_ir_DIR engine/ir)              # the graph, ONNX import, tensor protos
set(TILEBANK_LAYER_ir_USES kernels)
set(TILEBANK_LAYER_passes_DIR engine/passes)      # folding, lowering, QDQ fusion, partition into subgraphs
set(TILEBANK_LAYER_passes_USES ir)
set(TILEBANK_LAYER_runtime_DIR engine/runtime)    # binding, layouts, memory, the run loop, the session
set(TILEBANK_LAYER_runtime_USES passes catalog)
set(TILEBANK_LAYER_tuning_DIR engine/tuning)      # strategies, cost model, runner, tuners
set(TILEBANK_LAYER_tuning_USES runtime)
set(TILEBANK_LAYER_quantize_DIR engine/quantize)  # calibration and the static quantizer
set(TILEBANK_LAYER_quantize_USES runtime)
set(TILEBANK_LAYER_jobs_DIR engine/jobs)          # OPAT, SGAT and GDAT jobs, result files, the task loop
set(TILEBANK_LAYER_jobs_USES tuning)
set(TILEBANK_LAYER_batch_DIR engine/batch)        # batch plans, shards, workers, merges
set(TILEBANK_LAYER_batch_USES jobs)
set(TILEBANK_LAYER_report_DIR report)             # HTML reports of jobs and banks
set(TILEBANK_LAYER_report_USES jobs)

# TILEBANK_LAYER_<name>_BELOW: every layer <name> reaches through the ones it uses.
foreach(layer IN LISTS TILEBANK_LAYERS)
  set(below ${TILEBANK_LAYER_${layer}_USES})
  foreach(used IN LISTS TILEBANK_LAYER_${layer}_USES)
    list(APPEND below ${TILEBANK_LAYER_${used}_BELOW})
  endforeach()
  list(REMOVE_DUPLICATES below)
  set(TILEBANK_LAYER_${layer}_BELOW ${below})
endforeach()
