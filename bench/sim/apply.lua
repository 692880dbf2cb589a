-- wrk script: a mix of server-side applies (3 of 4) and GETs (1 of 4) on
-- 1000 ConfigMaps of one cluster. SIM_TOKEN and SIM_PREFIX come from run.sh.
local token = os.getenv("SIM_TOKEN")
local prefix = os.getenv("SIM_PREFIX")
local n = 0
request = function()
  n = n + 1
  local name = "wrk-" .. (n % 1000)
  if n % 4 == 0 then name = "wrk-" .. ((n - 1) % 1000) end  -- one applied just before
  local path = prefix .. "/api/v1/namespaces/default/configmaps/" .. name
  local headers = { ["Authorization"] = "Bearer " .. token }
  if n % 4 == 0 then
    return wrk.format("GET", path, headers)
  end
  headers["Content-Type"] = "application/apply-patch+yaml"
  local body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"' .. name ..
               '"},"data":{"n":"' .. n .. '"}}'
  return wrk.format("PATCH", path .. "?fieldManager=wrk", headers, body)
end
