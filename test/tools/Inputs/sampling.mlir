// graph.grid_sample, graph.roi_align and graph.det for
// test/tools/sampling.test, all through the portable lowerings
// (lowering/Common/Portable/Sampling.cpp, Determinant.cpp): every sampling
// mode with every padding mode, both corner alignments; roi_align's
// adaptive and fixed sampling, avg and max, both coordinate modes; a batch
// of determinants (one matrix singular).
func.func @main(%x: tensor<2x3x5x7xf32> {graph.name = "x"}, %grid: tensor<2x4x6x2xf32> {graph.name = "grid"}, %rois: tensor<3x4xf32> {graph.name = "rois"}, %bi: tensor<3xi64> {graph.name = "bi"}, %m: tensor<2x3x4x4xf32> {graph.name = "m"}) -> (tensor<2x3x4x6xf32> {graph.name = "bilinear_zeros"}, tensor<2x3x4x6xf32> {graph.name = "bilinear_reflection"}, tensor<2x3x4x6xf32> {graph.name = "nearest_border"}, tensor<2x3x4x6xf32> {graph.name = "nearest_reflection"}, tensor<2x3x4x6xf32> {graph.name = "bicubic_border"}, tensor<2x3x4x6xf32> {graph.name = "bicubic_reflection"}, tensor<2x3x4x6xf32> {graph.name = "cubic_zeros"}, tensor<3x3x2x3xf32> {graph.name = "roi_avg"}, tensor<3x3x2x3xf32> {graph.name = "roi_max"}, tensor<2x3xf32> {graph.name = "det"}) {
  %bz = graph.grid_sample %x, %grid : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
  %br = graph.grid_sample %x, %grid {padding_mode = "reflection", align_corners = 1 : i64} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
  %nb = graph.grid_sample %x, %grid {mode = "nearest", padding_mode = "border"} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
  %nr = graph.grid_sample %x, %grid {mode = "nearest", padding_mode = "reflection", align_corners = 1 : i64} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
  %cb = graph.grid_sample %x, %grid {mode = "bicubic", padding_mode = "border", align_corners = 1 : i64} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
  %cr = graph.grid_sample %x, %grid {mode = "bicubic", padding_mode = "reflection"} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
  %cz = graph.grid_sample %x, %grid {mode = "cubic"} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
  %ra = graph.roi_align %x, %rois, %bi {output_height = 2 : i64, output_width = 3 : i64} : (tensor<2x3x5x7xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x3x2x3xf32>
  %rm = graph.roi_align %x, %rois, %bi {mode = "max", coordinate_transformation_mode = "output_half_pixel", output_height = 2 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64, spatial_scale = 0.75 : f32} : (tensor<2x3x5x7xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x3x2x3xf32>
  %d = graph.det %m : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
  return %bz, %br, %nb, %nr, %cb, %cr, %cz, %ra, %rm, %d : tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<2x3x4x6xf32>, tensor<3x3x2x3xf32>, tensor<3x3x2x3xf32>, tensor<2x3xf32>
}
