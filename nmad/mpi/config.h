// MadMPI's RONDO_* variables in the configuration registry
// (topology/base/config_registry.h): the collective algorithm forced per
// collective (RONDO_COLL_<NAME>), the collectives' tuning, and the compiler
// wrappers' compiler choice (rondo-mpicc, rondo-mpicxx: shell scripts built
// from tools/rondo-mpi-wrapper.in that compile against MadMPI; their
// variables are declared here, with the library they build for, so that
// `rondo-info --config` lists them).
//
// A small library of its own (:config, linked whole) so that rondo-info
// lists these without linking MadMPI.
#ifndef RONDO_NMAD_MPI_CONFIG_H_
#define RONDO_NMAD_MPI_CONFIG_H_

#include <string>
#include <vector>

#include "nmad/coll/algorithms.h"
#include "topology/base/config_registry.h"

namespace rondo::nmad::mpi {

// "RONDO_COLL_ALLREDUCE" for coll::Collective::kAllreduce.
std::string CollVariable(coll::Collective c);

std::vector<base::ConfigDecl> MpiDeclarations();

}  // namespace rondo::nmad::mpi

#endif  // RONDO_NMAD_MPI_CONFIG_H_
