module example.com/logpipe

go 1.26
