module example.com/route

go 1.26
