"""kornia: image filtering, color and geometry on a batch of images."""
import kornia
import torch

from _harness import DEVICE, arr, report

img = arr(2, 3, 16, 16).sigmoid().to(DEVICE)
blur = kornia.filters.gaussian_blur2d(img, (5, 5), (1.5, 1.5))
gray = kornia.color.rgb_to_grayscale(img)
sobel = kornia.filters.sobel(gray)
angle = torch.tensor([30.0, -45.0]).to(DEVICE)
rot = kornia.geometry.transform.rotate(img, angle)
report(blur=blur[0, 0, :2], gray=gray.mean().item(), sobel=sobel.sum().item(),
       rot=rot[1, 2, 8])
