module labelprof/tests/workloads/golabels

go 1.17
