-- health.lua - wrk script: GET /api/health (the URL given to wrk), the
-- cheapest route (one read of sqlite_master on a read connection): the
-- floor of what detmd's HTTP layer can serve on this machine.
package.path = debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua;" .. package.path
require("count")

wrk.method = "GET"
