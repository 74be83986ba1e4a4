package fetch

// What the tests of package fetch_test, which load queries through package source, share
// with the tests of package fetch.
var (
	FleetNow        = fleetNow
	ParseFleetQuery = parseFleetQuery
	ReadParcaAnswer = readParcaAnswer
)

const (
	PyroscopeCPU    = pyroscopeCPU
	ParcaDir        = parcaDir
	ParcaQueryPath  = parcaQueryPath
	ParcaLabelsPath = parcaLabelsPath
)
