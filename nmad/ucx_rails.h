// UcxRails: the RailFactory of //nmad:core (rail kind "ucx": one UcxDriver,
// a UCP context and worker, per rail).
#ifndef RONDO_NMAD_UCX_RAILS_H_
#define RONDO_NMAD_UCX_RAILS_H_

#include "nmad/rail_factory.h"

namespace rondo::nmad {

class UcxRails final : public RailFactory {
 public:
  engine::Result<std::unique_ptr<drivers::Driver>> Create(
      const RailConfig& config, std::string* error) const override;
};

}  // namespace rondo::nmad

#endif  // RONDO_NMAD_UCX_RAILS_H_
