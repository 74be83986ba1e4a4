# limma.R writes limma.json, the reference values of internal/stats' moderated t-test tests:
# limma's empirical Bayes fit (fitFDist, squeezeVar, eBayes) of a two-group comparison, its
# trigammaInverse, and R's Holm adjustment. It needs R with Bioconductor's limma (Debian:
# apt-get install r-bioc-limma); the tests read only the JSON it writes:
#
#   Rscript internal/stats/testdata/limma.R > internal/stats/testdata/limma.json
suppressMessages(library(limma))

num <- function(x) paste(sprintf("%.17g", x), collapse = ", ")
arr <- function(x) paste0("[", num(x), "]")
mat <- function(m) paste0("[", paste(apply(m, 1, arr), collapse = ", "), "]")

# One comparison: G features with 5 base and 5 new values each, variances spread as a scaled
# inverse chi-square (the prior limma assumes), the first few features shifted on the new side.
case <- function(name, seed, G, nb, nn, d0) {
  set.seed(seed)
  s2 <- 0.02 * d0 / rchisq(G, df = d0)
  level <- runif(G, 2, 8)
  y <- matrix(rnorm(G * (nb + nn), mean = rep(level, nb + nn), sd = rep(sqrt(s2), nb + nn)), G)
  y[1:5, (nb + 1):(nb + nn)] <- y[1:5, (nb + 1):(nb + nn)] + 0.25
  group <- factor(c(rep("base", nb), rep("new", nn)))
  fit <- eBayes(lmFit(y, model.matrix(~group)))
  paste0("{\"name\": \"", name, "\", \"base\": ", mat(y[, 1:nb, drop = FALSE]),
         ", \"new\": ", mat(y[, (nb + 1):(nb + nn), drop = FALSE]),
         ", \"s2_prior\": ", num(fit$s2.prior), ", \"df_prior\": ", num(min(fit$df.prior, 1e300)),
         ", \"coef\": ", arr(fit$coefficients[, 2]), ", \"t\": ", arr(fit$t[, 2]),
         ", \"df_total\": ", arr(fit$df.total), ", \"s2_post\": ", arr(fit$s2.post),
         ", \"p_value\": ", arr(fit$p.value[, 2]), "}")
}

cases <- c(
  case("5v5", 1, 60, 5, 5, 6),
  case("3v4", 2, 40, 3, 4, 3),
  case("2v2-tight", 3, 80, 2, 2, 40),
  case("10v10", 4, 30, 10, 10, 4)
)

x <- c(0.001, 0.01, 0.1, 0.5, 1, 2, 10, 100, 1000)
p <- c(0.01, 0.04, 0.03, 0.005, 0.2, 0.0001, 0.04, 0.9)
cat("{\n\"cases\": [\n", paste(cases, collapse = ",\n"), "\n],\n",
    "\"trigamma_inverse\": {\"x\": ", arr(x), ", \"y\": ", arr(trigammaInverse(x)), "},\n",
    "\"trigamma\": {\"x\": ", arr(x), ", \"y\": ", arr(trigamma(x)), "},\n",
    "\"holm\": {\"p\": ", arr(p), ", \"adjusted\": ", arr(p.adjust(p, "holm")), "}\n}\n", sep = "")
