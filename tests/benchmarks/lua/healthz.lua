-- GET /healthz through a Lua request() like the other scripts: the same rate as plain wrk shows
-- the scripting costs the load generator nothing that matters.
function request()
  return wrk.format("GET", "/healthz")
end
