// Provenance (harness/provenance.hpp) written as attributes of an HDF5 object: the root of every run
// file lobench makes. The HDF5 side of the plain record, so that the record itself needs no HDF5.
#pragma once

#include <hdf5.h>

#include "harness/provenance.hpp"

namespace lobench {

// Writes the fields as attributes of `obj` (end_utc is written separately when the run closes).
void write_provenance(hid_t obj, const Provenance& p);

}  // namespace lobench
