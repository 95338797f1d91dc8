//===- DeviceModel.h - Running device models ----------------------*- C -*-===//
//
// Not a public header. The part of a model context that a device model
// (mlcc_model_desc::device) has instead of a host arena: the opened device,
// the kernels' pipelines and one device buffer per region (arena, weights,
// each input, each output). It is also the queue the entry's launches and
// read-backs go to.
//
//===----------------------------------------------------------------------===//

#ifndef MLCC_RUNTIME_SRC_DEVICEMODEL_H
#define MLCC_RUNTIME_SRC_DEVICEMODEL_H

#include "mlcc/model.h"

MLCC_EXTERN_C_BEGIN

typedef struct mlccDeviceModel mlccDeviceModel;

/// Opens the device and prepares `desc`'s program; `weights` is the data
/// of the model's weights file, or NULL when the program holds them. `fn`
/// names the caller in messages.
mlcc_status mlccDeviceModelCreate(const char *fn, const mlcc_model_desc *desc,
                                  const void *weights, mlccDeviceModel **out);
void mlccDeviceModelDestroy(mlccDeviceModel *model);

/// The opened device.
mlcc_device *mlccDeviceModelDevice(mlccDeviceModel *model);

/// Copies the inputs in, runs `entry` on the device addresses, and copies
/// the outputs out; with `outputDims` (room for every output's dims) also
/// the dims the run computed.
mlcc_status mlccDeviceModelRun(mlccDeviceModel *model,
                               mlcc_model_entry_fn entry,
                               const void *const *inputs, void *const *outputs,
                               int64_t *outputDims);

MLCC_EXTERN_C_END

#endif // MLCC_RUNTIME_SRC_DEVICEMODEL_H
