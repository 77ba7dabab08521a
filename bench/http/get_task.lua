-- get_task.lua - wrk script: GET /api/tasks/{id} (the URL given to wrk),
-- the task summary an agent or the dashboard polls.
package.path = debug.getinfo(1, "S").source:match("@?(.*/)") .. "?.lua;" .. package.path
require("count")

wrk.method = "GET"
