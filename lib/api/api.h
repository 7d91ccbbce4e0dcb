/* api.h - what the tests may see of the device API's handles. */
#ifndef TCX_API_API_H
#define TCX_API_API_H

#include "backend/backend.h"

/* The backend device behind a device of the API (borrowed). */
struct device *api_device(const struct tcx_device *dev);

#endif /* TCX_API_API_H */
