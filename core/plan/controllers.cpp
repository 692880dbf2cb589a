#include "core/plan/controllers.hpp"

#include <set>

namespace emco::controllers {

void Registry::add_placement(const std::string& name, std::unique_ptr<PlacementController> c) {
  m_placement[name] = std::move(c);
}

void Registry::add_action(const std::string& name, std::unique_ptr<ActionController> c) {
  m_action[name] = std::move(c);
}

const PlacementController* Registry::placement(const std::string& name) const {
  auto it = m_placement.find(name);
  return it == m_placement.end() ? nullptr : it->second.get();
}

const ActionController* Registry::action(const std::string& name) const {
  auto it = m_action.find(name);
  return it == m_action.end() ? nullptr : it->second.get();
}

std::vector<std::string> Registry::names() const {
  std::set<std::string> all;
  for (const auto& [name, c] : m_placement) all.insert(name);
  for (const auto& [name, c] : m_action) all.insert(name);
  return {all.begin(), all.end()};
}

}  // namespace emco::controllers
